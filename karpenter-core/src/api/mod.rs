//! Karpenter's API types: `karpenter.sh/v1` [`NodePool`] and [`NodeClaim`],
//! `karpenter.sh/v1alpha1` [`NodeOverlay`], and the headroom upstream serves
//! from cluster-autoscaler's API, `autoscaling.x-k8s.io/v1beta1`
//! [`CapacityBuffer`].
//!
//! These read real upstream manifests and write them back without loss:
//!
//! - every upstream field is modelled, and every object level keeps fields it
//!   does not know in an `extra` map (see [`ExtraFields`]) for newer upstreams;
//! - optional fields are `Option`s written only when present, so an absent
//!   field stays absent and `requirements: []` stays `[]`;
//! - CRD defaults (`consolidationPolicy`, `consolidateAfter`, `expireAfter`,
//!   `budgets`) are applied by `effective_*` accessors, never written;
//! - durations keep their text ([`GoDuration`], [`NillableDuration`]) and
//!   quantities their JSON type ([`Quantities`]).
//!
//! Two normalizations remain, both matching what Kubernetes itself writes:
//! timestamps ([`Time`](k8s_openapi::apimachinery::pkg::apis::meta::v1::Time))
//! are written as RFC 3339 UTC seconds, and an explicit `null` reads as
//! absent. `metadata` and the core `Taint` keep only the fields Kubernetes
//! defines, and `apiVersion`/`kind` are always written.
//!
//! [`NodePool::template_hash`] computes the template hash behind static drift
//! (`karpenter.sh/nodepool-hash`), and [`NodePool::annotate_hash`] and
//! [`NodePool::rehash_claim`] apply it as upstream's hash controller does.
//!
//! Validation beyond field syntax (CEL rules, label restrictions) is not done
//! here, and the requirement algebra lives in [`crate::scheduling`].
//!
//! ```
//! use std::time::Duration;
//! use karpenter_core::api::{ConsolidationPolicy, NodePool};
//! use serde_json::json;
//!
//! let manifest = json!({
//!     "apiVersion": "karpenter.sh/v1",
//!     "kind": "NodePool",
//!     "metadata": {"name": "default"},
//!     "spec": {
//!         "template": {"spec": {
//!             "requirements": [
//!                 {"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["spot"]},
//!             ],
//!             "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"},
//!             "expireAfter": "Never",
//!         }},
//!         "limits": {"cpu": 1000},
//!     },
//! });
//! let pool: NodePool = serde_json::from_value(manifest.clone())?;
//! assert_eq!(pool.name(), Some("default"));
//! assert_eq!(pool.spec.template.spec.effective_expire_after(), None); // Never
//! assert_eq!(pool.spec.effective_consolidation_policy(), ConsolidationPolicy::WhenEmptyOrUnderutilized);
//! assert_eq!(pool.spec.effective_consolidate_after(), Some(Duration::ZERO));
//! assert_eq!(pool.spec.effective_budgets()[0].nodes(), "10%");
//! assert_eq!(serde_json::to_value(&pool)?, manifest);
//! # Ok::<(), serde_json::Error>(())
//! ```

mod capacitybuffer;
mod condition;
mod disruption;
mod duration;
mod nodeclaim;
mod nodeoverlay;
mod nodepool;
mod object;
mod quantities;
mod requirement;
mod template_hash;

#[cfg(test)]
mod tests;

use std::collections::BTreeMap;

pub use capacitybuffer::{
    ACTIVE_CAPACITY_STRATEGY, CapacityBuffer, CapacityBufferSpec, CapacityBufferStatus,
    LocalObjectRef, ScalableRef,
};
pub use condition::{Condition, ConditionStatus, Conditions, types as condition_types};
pub use disruption::{
    Budget, BudgetNodes, BudgetNodesError, ConsolidationPolicy, DEFAULT_BUDGET_NODES, Disruption,
    DisruptionReason,
};
pub use duration::{DurationError, DurationErrorKind, GoDuration, NEVER, NillableDuration};
pub use nodeclaim::{
    DEFAULT_EXPIRE_AFTER, NodeClaim, NodeClaimSpec, NodeClaimStatus, NodeClassReference,
    ResourceRequirements,
};
pub use nodeoverlay::{NodeOverlay, NodeOverlaySpec, NodeOverlayStatus, OverlayRequirement};
pub use nodepool::{
    NodeClaimTemplate, NodeClaimTemplateSpec, NodePool, NodePoolSpec, NodePoolStatus,
    TemplateMetadata,
};
pub use object::API_VERSION;
pub use quantities::Quantities;
pub use requirement::NodeSelectorRequirementWithMinValues;
pub use template_hash::fnv1a64;

/// Fields a type does not know, by name, kept so that they are written back.
///
/// Do not put a field the type models here: it would be written twice.
pub type ExtraFields = BTreeMap<String, serde_json::Value>;
