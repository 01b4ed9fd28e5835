//! `NodePool`: a template for NodeClaims plus the limits, weight and
//! disruption settings that govern them.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::time::Duration;

use k8s_openapi::api::core::v1::Taint;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde::{Deserialize, Serialize};

use super::ExtraFields;
use super::condition::Condition;
use super::disruption::{Budget, ConsolidationPolicy, Disruption};
use super::duration::{GoDuration, NillableDuration};
use super::nodeclaim::{NodeClaim, NodeClaimSpec, NodeClassReference, expire_after_or_default};

use super::quantities::Quantities;
use super::requirement::NodeSelectorRequirementWithMinValues;

/// A `karpenter.sh/v1` NodePool.
///
/// Deserializing checks `apiVersion` and `kind` when present and tolerates
/// their absence; serializing always writes them. `metadata` is always
/// written (as Go does), `status` only when present.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct NodePool {
    /// Standard object metadata.
    pub metadata: ObjectMeta,
    /// The desired state.
    pub spec: NodePoolSpec,
    /// The observed state, absent on a manifest not read from a cluster.
    pub status: Option<NodePoolStatus>,
    /// Top-level fields this version does not know.
    pub extra: ExtraFields,
}

super::object::karpenter_object!(NodePool, "NodePool", "nodepools");

/// `spec` of a [`NodePool`].
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NodePoolSpec {
    /// What NodeClaims launched from this NodePool look like.
    pub template: NodeClaimTemplate,
    /// Consolidation and disruption budgets.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub disruption: Option<Disruption>,
    /// Upper bounds on the capacity provisioned, by resource name; `nodes`
    /// bounds the node count (the only limit allowed on static NodePools).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limits: Option<Quantities>,
    /// Priority among NodePools (1 to 100, higher first); absent counts as 0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub weight: Option<i32>,
    /// The fixed node count of a static NodePool (alpha upstream); absent for
    /// NodePools that scale with pending pods.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replicas: Option<i64>,
    /// Fields this version does not know.
    #[serde(flatten)]
    pub extra: ExtraFields,
}

impl NodePoolSpec {
    /// Whether this is a static NodePool (`replicas` is set).
    pub fn is_static(&self) -> bool {
        self.replicas.is_some()
    }

    /// `weight`, counting an absent one as 0 like upstream.
    pub fn effective_weight(&self) -> i32 {
        self.weight.unwrap_or(0)
    }

    /// `disruption.consolidationPolicy` with the CRD default applied.
    pub fn effective_consolidation_policy(&self) -> ConsolidationPolicy {
        self.disruption
            .as_ref()
            .map(Disruption::effective_consolidation_policy)
            .unwrap_or_default()
    }

    /// `disruption.consolidateAfter` with the CRD default (`0s`) applied;
    /// `None` means `Never`.
    pub fn effective_consolidate_after(&self) -> Option<Duration> {
        self.disruption.as_ref().map_or(
            Some(Duration::ZERO),
            Disruption::effective_consolidate_after,
        )
    }

    /// `disruption.budgets`, or the default `[{nodes: "10%"}]` when absent.
    pub fn effective_budgets(&self) -> Cow<'_, [Budget]> {
        match &self.disruption {
            Some(disruption) => disruption.effective_budgets(),
            None => Cow::Owned(Disruption::default().effective_budgets().into_owned()),
        }
    }
}

/// `spec.template` of a [`NodePool`].
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct NodeClaimTemplate {
    /// Labels and annotations for the NodeClaims (and so their Nodes).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<TemplateMetadata>,
    /// The NodeClaim spec, without resource requests.
    pub spec: NodeClaimTemplateSpec,
    /// Fields this version does not know.
    #[serde(flatten)]
    pub extra: ExtraFields,
}

impl NodeClaimTemplate {
    /// A NodeClaim with this template's labels, annotations and spec, as
    /// upstream's `ToNodeClaim` builds it; fields unknown here are not copied.
    pub fn to_node_claim(&self) -> NodeClaim {
        let metadata = self.metadata.clone().unwrap_or_default();
        let spec = self.spec.clone();
        NodeClaim {
            metadata: ObjectMeta {
                labels: metadata.labels,
                annotations: metadata.annotations,
                ..ObjectMeta::default()
            },
            spec: NodeClaimSpec {
                taints: spec.taints,
                startup_taints: spec.startup_taints,
                requirements: spec.requirements,
                node_class_ref: spec.node_class_ref,
                termination_grace_period: spec.termination_grace_period,
                expire_after: spec.expire_after,
                ..NodeClaimSpec::default()
            },
            ..NodeClaim::default()
        }
    }
}

/// `spec.template.metadata` of a [`NodePool`]: only labels and annotations.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct TemplateMetadata {
    /// Labels applied to the NodeClaims and their Nodes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub labels: Option<BTreeMap<String, String>>,
    /// Annotations applied to the NodeClaims and their Nodes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<BTreeMap<String, String>>,
    /// Fields this version does not know.
    #[serde(flatten)]
    pub extra: ExtraFields,
}

/// `spec.template.spec` of a [`NodePool`]: a NodeClaim spec without
/// resource requests, which users cannot set on a NodePool.
///
/// `requirements` and `nodeClassRef` are required by the CRD but optional
/// here, so that hand-written scenarios without them still parse.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NodeClaimTemplateSpec {
    /// Taints applied to the Nodes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub taints: Option<Vec<Taint>>,
    /// Taints present at startup that something else removes later; pods
    /// need not tolerate them to be provisioned for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub startup_taints: Option<Vec<Taint>>,
    /// Constraints on the launched capacity, layered with the labels.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requirements: Option<Vec<NodeSelectorRequirementWithMinValues>>,
    /// The provider-specific NodeClass.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_class_ref: Option<NodeClassReference>,
    /// The longest a Node's draining may take before pods are deleted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub termination_grace_period: Option<GoDuration>,
    /// How long after creation a Node expires, or `Never`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expire_after: Option<NillableDuration>,
    /// Fields this version does not know.
    #[serde(flatten)]
    pub extra: ExtraFields,
}

impl NodeClaimTemplateSpec {
    /// The requirements, empty when absent.
    pub fn requirements(&self) -> &[NodeSelectorRequirementWithMinValues] {
        self.requirements.as_deref().unwrap_or_default()
    }

    /// The taints, empty when absent.
    pub fn taints(&self) -> &[Taint] {
        self.taints.as_deref().unwrap_or_default()
    }

    /// The startup taints, empty when absent.
    pub fn startup_taints(&self) -> &[Taint] {
        self.startup_taints.as_deref().unwrap_or_default()
    }

    /// `expireAfter` with the CRD default (`720h`) applied; `None` means
    /// `Never`.
    pub fn effective_expire_after(&self) -> Option<Duration> {
        expire_after_or_default(self.expire_after.as_ref())
    }

    /// `terminationGracePeriod`; `None` (no default) means pods may take as
    /// long as they need to drain.
    pub fn effective_termination_grace_period(&self) -> Option<Duration> {
        self.termination_grace_period
            .as_ref()
            .map(GoDuration::as_std)
    }
}

/// `status` of a [`NodePool`].
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NodePoolStatus {
    /// The resources provisioned by this NodePool's nodes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resources: Option<Quantities>,
    /// How many nodes belong to this NodePool (CRD default 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nodes: Option<i64>,
    /// The NodeClass generation last observed; a change resets
    /// `NodeRegistrationHealthy`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_class_observed_generation: Option<i64>,
    /// Health and readiness signals.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conditions: Option<Vec<Condition>>,
    /// Fields this version does not know.
    #[serde(flatten)]
    pub extra: ExtraFields,
}
