//! Builders for the objects of a [`Snapshot`](super::Snapshot) written in
//! code: a NodePool, a pod, and an existing node joined to its NodeClaim, each
//! filled in as a live cluster shows it, so that a test or a capacity planner
//! states only what matters to it.
//!
//! ```
//! use std::collections::BTreeMap;
//! use std::sync::Arc;
//!
//! use karpenter_core::cloudprovider::{InstanceType, Offering};
//! use karpenter_core::provisioning::schedule;
//! use karpenter_core::resources::ResourceList;
//! use karpenter_core::snapshot::build::{NodeBuilder, NodePoolBuilder, PodBuilder};
//! use karpenter_core::Snapshot;
//!
//! let mut capacity = ResourceList::new();
//! capacity.set("cpu", 4_000); // millicores
//! capacity.set("memory", 16 * (1 << 30) * 1000); // milli-bytes
//! capacity.set("pods", 110_000);
//! let m4 = InstanceType::new(
//!     "m-4",
//!     [("kubernetes.io/arch", "amd64"), ("kubernetes.io/os", "linux")],
//!     vec![Offering::new("zone-a", "on-demand", 0.20)],
//!     capacity,
//!     ResourceList::new(),
//! );
//! let snapshot = Snapshot {
//!     node_pools: vec![NodePoolBuilder::new("default").build()],
//!     instance_types: BTreeMap::from([("default".to_owned(), Arc::from(vec![m4]))]),
//!     nodes: vec![
//!         NodeBuilder::managed("node-a", "default", "m-4")
//!             .zone("zone-a")
//!             .allocatable("cpu", "3900m")
//!             .allocatable("memory", "15Gi")
//!             .allocatable("pods", "110")
//!             .build(),
//!     ],
//!     pods: vec![
//!         PodBuilder::new("default", "db").requests("3", "8Gi").on_node("node-a").build(),
//!         PodBuilder::new("default", "web").requests("500m", "1Gi").build(),
//!         PodBuilder::new("default", "batch").requests("2", "4Gi").build(),
//!     ],
//!     ..Snapshot::default()
//! };
//! let plan = schedule(&snapshot);
//! // web fits beside db; batch needs a new node.
//! assert_eq!(plan.existing_nodes[0].name, "node-a");
//! assert_eq!(plan.existing_nodes[0].pods, ["default/web"]);
//! assert_eq!(plan.node_claims.len(), 1);
//! assert_eq!(plan.node_claims[0].pods, ["default/batch"]);
//! ```

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{
    Container, Node, NodeSpec, NodeStatus, Pod, PodCondition, PodSpec, PodStatus,
    ResourceRequirements, Taint, Toleration,
};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, Time};
use k8s_openapi::jiff::Timestamp;

use super::ClusterNode;
use crate::api::{
    Condition, ConditionStatus, NodeClaim, NodeClaimStatus, NodeClaimTemplate,
    NodeClaimTemplateSpec, NodePool, NodePoolSpec, NodeSelectorRequirementWithMinValues,
    Quantities, TemplateMetadata, condition_types,
};
use crate::scheduling::{
    CAPACITY_TYPE_LABEL_KEY, CAPACITY_TYPE_ON_DEMAND, LABEL_HOSTNAME, LABEL_INSTANCE_TYPE_STABLE,
    LABEL_TOPOLOGY_ZONE, NODE_INITIALIZED_LABEL_KEY, NODE_POOL_LABEL_KEY,
    NODE_REGISTERED_LABEL_KEY,
};

/// A NodePool: no requirements, limits, taints or weight until given.
#[derive(Clone, Debug)]
pub struct NodePoolBuilder {
    pool: NodePool,
}

impl NodePoolBuilder {
    /// A pool named `name`.
    pub fn new(name: impl Into<String>) -> Self {
        let mut pool = NodePool {
            spec: NodePoolSpec {
                template: NodeClaimTemplate {
                    metadata: Some(TemplateMetadata::default()),
                    spec: NodeClaimTemplateSpec::default(),
                    ..NodeClaimTemplate::default()
                },
                ..NodePoolSpec::default()
            },
            ..NodePool::default()
        };
        pool.metadata.name = Some(name.into());
        Self { pool }
    }

    /// Adds a requirement (`In`, `NotIn`, `Exists`, `DoesNotExist`, `Gt`,
    /// `Lt`) on `key` to the template.
    pub fn requirement(
        mut self,
        key: impl Into<String>,
        operator: impl Into<String>,
        values: impl IntoIterator<Item = impl Into<String>>,
    ) -> Self {
        self.pool
            .spec
            .template
            .spec
            .requirements
            .get_or_insert_with(Vec::new)
            .push(NodeSelectorRequirementWithMinValues::new(
                key, operator, values,
            ));
        self
    }

    /// Adds a label the pool's nodes carry.
    pub fn label(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        let metadata = self
            .pool
            .spec
            .template
            .metadata
            .get_or_insert_with(Default::default);
        metadata
            .labels
            .get_or_insert_with(BTreeMap::new)
            .insert(key.into(), value.into());
        self
    }

    /// Adds a taint the pool's nodes carry.
    pub fn taint(mut self, taint: Taint) -> Self {
        self.pool
            .spec
            .template
            .spec
            .taints
            .get_or_insert_with(Vec::new)
            .push(taint);
        self
    }

    /// Limits what the pool's nodes may add up to (`cpu`, `memory`, `nodes`,
    /// ...), as a Kubernetes quantity (`"100"`, `"512Gi"`).
    pub fn limit(mut self, resource: impl Into<String>, quantity: impl Into<String>) -> Self {
        self.pool
            .spec
            .limits
            .get_or_insert_with(Quantities::default)
            .insert(resource, Quantity(quantity.into()));
        self
    }

    /// The pool's weight (heavier pools are tried first).
    pub fn weight(mut self, weight: i32) -> Self {
        self.pool.spec.weight = Some(weight);
        self
    }

    /// The NodePool.
    pub fn build(self) -> NodePool {
        self.pool
    }
}

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
                conditions: Some(vec![PodCondition {
                    type_: "PodScheduled".to_owned(),
                    status: "False".to_owned(),
                    reason: Some("Unschedulable".to_owned()),
                    ..PodCondition::default()
                }]),
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

/// An existing node: one Karpenter manages (a Node joined to its NodeClaim,
/// launched, registered and initialized) or one it does not (a Node alone).
/// Its allocatable resources are what pods may use; its capacity is the same
/// unless given.
#[derive(Clone, Debug)]
pub struct NodeBuilder {
    name: String,
    /// The NodePool, for a managed node.
    pool: Option<String>,
    labels: BTreeMap<String, String>,
    allocatable: BTreeMap<String, Quantity>,
    capacity: BTreeMap<String, Quantity>,
    taints: Vec<Taint>,
    initialized: bool,
    created: Option<Timestamp>,
}

impl NodeBuilder {
    /// A node of `pool` launched as `instance_type`, on demand, its claim
    /// named as the node; initialized.
    pub fn managed(
        name: impl Into<String>,
        pool: impl Into<String>,
        instance_type: impl Into<String>,
    ) -> Self {
        let pool = pool.into();
        let mut node = Self::unmanaged(name);
        node.labels.extend([
            (NODE_POOL_LABEL_KEY.to_owned(), pool.clone()),
            (LABEL_INSTANCE_TYPE_STABLE.to_owned(), instance_type.into()),
            (
                CAPACITY_TYPE_LABEL_KEY.to_owned(),
                CAPACITY_TYPE_ON_DEMAND.to_owned(),
            ),
            (NODE_REGISTERED_LABEL_KEY.to_owned(), "true".to_owned()),
        ]);
        node.pool = Some(pool);
        node
    }

    /// A node Karpenter does not manage.
    pub fn unmanaged(name: impl Into<String>) -> Self {
        let name = name.into();
        Self {
            labels: BTreeMap::from([(LABEL_HOSTNAME.to_owned(), name.clone())]),
            name,
            pool: None,
            allocatable: BTreeMap::new(),
            capacity: BTreeMap::new(),
            taints: Vec::new(),
            initialized: true,
            created: None,
        }
    }

    /// The node's zone (`topology.kubernetes.io/zone`).
    pub fn zone(self, zone: impl Into<String>) -> Self {
        self.label(LABEL_TOPOLOGY_ZONE, zone)
    }

    /// The node's capacity type (`karpenter.sh/capacity-type`: `spot`,
    /// `on-demand`, ...).
    pub fn capacity_type(self, capacity_type: impl Into<String>) -> Self {
        self.label(CAPACITY_TYPE_LABEL_KEY, capacity_type)
    }

    /// Adds a label.
    pub fn label(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.labels.insert(key.into(), value.into());
        self
    }

    /// What pods may use of `resource` (a Kubernetes quantity).
    pub fn allocatable(mut self, resource: impl Into<String>, quantity: impl Into<String>) -> Self {
        self.allocatable
            .insert(resource.into(), Quantity(quantity.into()));
        self
    }

    /// The node's capacity of `resource`, when it differs from allocatable.
    pub fn capacity(mut self, resource: impl Into<String>, quantity: impl Into<String>) -> Self {
        self.capacity
            .insert(resource.into(), Quantity(quantity.into()));
        self
    }

    /// Adds a taint.
    pub fn taint(mut self, taint: Taint) -> Self {
        self.taints.push(taint);
        self
    }

    /// A managed node still starting: registered, not initialized (its Node
    /// lacks `karpenter.sh/initialized`).
    pub fn starting(mut self) -> Self {
        self.initialized = false;
        self
    }

    /// When the node (and its claim) was created.
    pub fn created(mut self, at: Timestamp) -> Self {
        self.created = Some(at);
        self
    }

    /// The node, joined to its claim when managed.
    pub fn build(self) -> ClusterNode {
        let provider_id = format!("builder:///{}", self.name);
        let mut capacity = self.allocatable.clone();
        capacity.extend(self.capacity);
        let mut labels = self.labels;
        if self.pool.is_some() && self.initialized {
            labels.insert(NODE_INITIALIZED_LABEL_KEY.to_owned(), "true".to_owned());
        }
        let created = self.created.map(Time);
        let node_claim = self.pool.as_ref().map(|_| {
            let mut conditions = vec![
                Condition::new(condition_types::LAUNCHED, ConditionStatus::True),
                Condition::new(condition_types::REGISTERED, ConditionStatus::True),
            ];
            if self.initialized {
                conditions.push(Condition::new(
                    condition_types::INITIALIZED,
                    ConditionStatus::True,
                ));
            }
            let mut claim = NodeClaim::default();
            claim.metadata.name = Some(self.name.clone());
            claim.metadata.labels = Some(labels.clone());
            claim.metadata.creation_timestamp = created.clone();
            claim.status = Some(NodeClaimStatus {
                node_name: Some(self.name.clone()),
                provider_id: Some(provider_id.clone()),
                capacity: Some(Quantities::from(capacity.clone())),
                allocatable: Some(Quantities::from(self.allocatable.clone())),
                conditions: Some(conditions),
                ..NodeClaimStatus::default()
            });
            claim
        });
        let node = Node {
            metadata: ObjectMeta {
                name: Some(self.name),
                labels: Some(labels),
                creation_timestamp: created,
                ..ObjectMeta::default()
            },
            spec: Some(NodeSpec {
                provider_id: Some(provider_id),
                taints: (!self.taints.is_empty()).then_some(self.taints),
                ..NodeSpec::default()
            }),
            status: Some(NodeStatus {
                capacity: Some(capacity),
                allocatable: Some(self.allocatable),
                conditions: Some(vec![k8s_openapi::api::core::v1::NodeCondition {
                    type_: "Ready".to_owned(),
                    status: "True".to_owned(),
                    ..Default::default()
                }]),
                ..NodeStatus::default()
            }),
        };
        ClusterNode {
            node: Some(node),
            node_claim,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_managed_node_is_joined_initialized_and_priced_by_its_labels() {
        let node = NodeBuilder::managed("node-a", "default", "m-4")
            .zone("zone-a")
            .capacity_type("spot")
            .allocatable("cpu", "3900m")
            .capacity("cpu", "4")
            .build();
        assert!(node.is_managed());
        assert!(node.is_initialized());
        assert!(!node.is_marked_for_deletion());
        assert_eq!(node.name(), "node-a");
        assert_eq!(node.state_name(), "node-a");
        assert_eq!(node.node_pool(), Some("default"));
        let labels = node.labels().expect("labels");
        assert_eq!(labels[CAPACITY_TYPE_LABEL_KEY], "spot");
        assert_eq!(labels[LABEL_TOPOLOGY_ZONE], "zone-a");
        assert_eq!(node.capacity().get("cpu"), 4000);
        let starting = NodeBuilder::managed("node-b", "default", "m-4")
            .starting()
            .build();
        assert!(!starting.is_initialized());
        assert!(!NodeBuilder::unmanaged("node-c").build().is_managed());
    }

    #[test]
    fn a_built_pod_is_pending_until_bound() {
        let pod = PodBuilder::new("default", "web")
            .requests("1", "1Gi")
            .build();
        assert!(crate::provisioning::is_pending(&pod));
        let bound = PodBuilder::new("default", "web").on_node("node-a").build();
        assert!(!crate::provisioning::is_pending(&bound));
        assert_eq!(crate::provisioning::bound_node(&bound), Some("node-a"));
    }

    #[test]
    fn a_pool_carries_what_it_was_given() {
        let pool = NodePoolBuilder::new("gpu")
            .requirement("karpenter.sh/capacity-type", "In", ["spot"])
            .label("team", "ml")
            .limit("cpu", "100")
            .weight(10)
            .build();
        assert_eq!(pool.name(), Some("gpu"));
        assert_eq!(pool.spec.weight, Some(10));
        assert_eq!(pool.spec.template.spec.requirements().len(), 1);
        let limits = pool.spec.limits.expect("limits");
        assert_eq!(limits.as_map()["cpu"], Quantity("100".to_owned()));
    }
}
