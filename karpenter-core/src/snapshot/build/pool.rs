//! A NodePool written in code.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::Taint;
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;

use crate::api::{
    NodeClaimTemplate, NodeClaimTemplateSpec, NodePool, NodePoolSpec,
    NodeSelectorRequirementWithMinValues, Quantities, TemplateMetadata,
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
