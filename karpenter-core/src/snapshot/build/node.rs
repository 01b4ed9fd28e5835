//! An existing node (a Node joined to its NodeClaim) written in code.

use std::collections::BTreeMap;
use std::sync::Arc;

use k8s_openapi::api::core::v1::{Node, NodeSpec, NodeStatus, Taint};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, Time};
use k8s_openapi::jiff::Timestamp;

use crate::api::{
    Condition, ConditionStatus, NodeClaim, NodeClaimStatus, Quantities, condition_types,
};
use crate::scheduling::{
    CAPACITY_TYPE_LABEL_KEY, CAPACITY_TYPE_ON_DEMAND, LABEL_HOSTNAME, LABEL_INSTANCE_TYPE_STABLE,
    LABEL_TOPOLOGY_ZONE, NODE_INITIALIZED_LABEL_KEY, NODE_POOL_LABEL_KEY,
    NODE_REGISTERED_LABEL_KEY,
};
use crate::snapshot::ClusterNode;

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
            node: Some(Arc::new(node)),
            node_claim,
        }
    }
}
