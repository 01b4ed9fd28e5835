//! Drift: whether a node no longer matches what its NodePool would launch
//! today, and why.
//!
//! Upstream splits this in two. The NodeClaim disruption controller
//! (`pkg/controllers/nodeclaim/disruption/drift.go`) decides whether a claim has
//! drifted, checking in order: the NodePool's template hash against the claim's
//! (`NodePoolDrifted`), the NodePool's requirements against the claim's labels
//! (`RequirementsDrifted`), whether the claim's instance type still exists
//! (`InstanceTypeNotFound`), and the cloud provider's own checks. It records the
//! first reason found as the claim's `Drifted` condition, and the disruption
//! controller's Drift method only reads that condition.
//!
//! A snapshot may be older or newer than the condition (a NodePool edited after
//! the dump, a hand-written scenario without conditions), so [`drift_with`] re-runs
//! the checks it can and keeps the condition as a last resort:
//!
//! 1. the template hash, as upstream;
//! 2. the requirements, as upstream;
//! 3. the claim's `Drifted=True` condition, which stands for the checks not
//!    re-run here (instance type not found, the provider's reasons) and for any
//!    reason recorded before the snapshot. A node whose condition says drifted
//!    is reported with a re-derived reason when one applies, since it names
//!    what changed, and with [`DriftReason::Condition`] otherwise.
//!
//! A condition that is present but `False` is not consulted: checks 1 and 2
//! still apply (upstream's controller would set the condition on its next
//! pass, at most five minutes later).

use std::fmt;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use crate::api::Conditions as _;
use crate::api::{NodeClaim, NodePool, condition_types};
use crate::scheduling::{
    NODE_POOL_HASH_ANNOTATION_KEY, NODE_POOL_HASH_VERSION_ANNOTATION_KEY, Requirement,
    Requirements, WellKnownLabels,
};
use crate::snapshot::ClusterNode;

/// Why a node is drifted: the first that applies, in the order the
/// [module documentation](self) gives.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub(super) enum DriftReason {
    /// The NodeClaim carries the condition `Drifted=True` and none of the
    /// checks re-run here explains it; `reason` is the condition's own
    /// (upstream writes the drift reason there: `InstanceTypeNotFound`, or a
    /// provider's such as `ImageDrift`).
    Condition {
        /// The condition's `reason`, if recorded.
        reason: Option<String>,
    },
    /// The NodePool's `karpenter.sh/nodepool-hash` differs from the
    /// NodeClaim's, both at the same `karpenter.sh/nodepool-hash-version`
    /// (upstream `NodePoolDrifted`): the template changed since launch.
    NodePoolHash {
        /// The NodePool's hash.
        pool: String,
        /// The NodeClaim's hash.
        claim: String,
    },
    /// The node's labels no longer meet the NodePool's requirements (upstream
    /// `RequirementsDrifted`).
    Requirements {
        /// The first requirement not met, for a person.
        detail: String,
    },
    /// A reason the cloud provider reports ([`Snapshot::provider_drift`](crate::snapshot::Snapshot::provider_drift)).
    Provider(String),
}

impl fmt::Display for DriftReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Condition { reason: None } => f.write_str("NodeClaim has condition Drifted=True"),
            Self::Condition {
                reason: Some(reason),
            } => write!(f, "NodeClaim has condition Drifted=True ({reason})"),
            Self::NodePoolHash { pool, claim } => write!(
                f,
                "NodePool template changed: {NODE_POOL_HASH_ANNOTATION_KEY} is {pool:?} on the NodePool, {claim:?} on the NodeClaim"
            ),
            Self::Requirements { detail } => {
                write!(
                    f,
                    "node labels no longer meet the NodePool's requirements: {detail}"
                )
            }
            Self::Provider(reason) => write!(f, "cloud provider reports drift: {reason}"),
        }
    }
}

/// Whether `node` has drifted from `pool`, and why (see the
/// [module documentation](self) for the order).
///
/// - The hash check needs both annotations on both objects, with equal hash
///   versions: a missing annotation or a version change (upstream re-hashes
///   after changing how it hashes) never counts as drift.
/// - The requirement check reads `spec.template.spec.requirements` only
///   (template labels are covered by the hash) and checks them as upstream
///   does, strictly: every key the pool requires with `In`, `Exists`, `Gt` or
///   `Lt` must be a label of the node with a value the requirement admits; a
///   `NotIn` or `DoesNotExist` key must not be contradicted. Upstream reads
///   the NodeClaim's labels; this reads the node's ([`ClusterNode::labels`]), as
///   the scenario format says: Karpenter copies the claim's labels onto the
///   node, and hand-written NodeClaims often carry few labels. Requirements
///   that cannot be read are skipped (the input's validation refuses them).
///
/// The reason the cloud provider's own check (`is_drifted`) gave for the
/// node's claim, if it found one, counts after the hash and requirement
/// checks and before the `Drifted` condition, as upstream checks the provider
/// last and records the first reason found in that condition.
pub(super) fn drift_with(
    node: &ClusterNode,
    pool: &NodePool,
    provider: Option<&str>,
) -> Option<DriftReason> {
    let claim = node.node_claim.as_ref();
    claim
        .and_then(|claim| hash_drift(pool, claim))
        .or_else(|| requirements_drift(node, pool))
        .or_else(|| provider.map(|reason| DriftReason::Provider(reason.to_owned())))
        .or_else(|| claim.and_then(condition_drift))
}

fn annotation<'m>(metadata: &'m ObjectMeta, key: &str) -> Option<&'m str> {
    metadata.annotations.as_ref()?.get(key).map(String::as_str)
}

fn hash_drift(pool: &NodePool, claim: &NodeClaim) -> Option<DriftReason> {
    let pool_hash = annotation(&pool.metadata, NODE_POOL_HASH_ANNOTATION_KEY)?;
    let pool_version = annotation(&pool.metadata, NODE_POOL_HASH_VERSION_ANNOTATION_KEY)?;
    let claim_hash = annotation(&claim.metadata, NODE_POOL_HASH_ANNOTATION_KEY)?;
    let claim_version = annotation(&claim.metadata, NODE_POOL_HASH_VERSION_ANNOTATION_KEY)?;
    (pool_version == claim_version && pool_hash != claim_hash).then(|| DriftReason::NodePoolHash {
        pool: pool_hash.to_owned(),
        claim: claim_hash.to_owned(),
    })
}

fn requirements_drift(node: &ClusterNode, pool: &NodePool) -> Option<DriftReason> {
    let mut required = Requirements::new();
    for written in pool.spec.template.spec.requirements() {
        let parsed = written.to_selector_requirement().ok();
        if let Some(requirement) = parsed.and_then(|r| Requirement::try_from(&r).ok()) {
            required.add(requirement);
        }
    }
    if required.is_empty() {
        return None;
    }
    let labels = Requirements::from_labels(node.labels().into_iter().flatten());
    labels
        .compatible(&required, &WellKnownLabels::empty())
        .err()
        .map(|error| DriftReason::Requirements {
            detail: error.to_string(),
        })
}

fn condition_drift(claim: &NodeClaim) -> Option<DriftReason> {
    let conditions = &claim.status.as_ref()?.conditions;
    let drifted = conditions
        .find(condition_types::DRIFTED)
        .filter(|c| c.is_true())?;
    Some(DriftReason::Condition {
        reason: drifted.reason.clone(),
    })
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;

    /// Drift without a verdict from the cloud provider.
    fn drift(node: &ClusterNode, pool: &NodePool) -> Option<DriftReason> {
        drift_with(node, pool, None)
    }

    fn pool(annotations: Value, requirements: Value) -> NodePool {
        serde_json::from_value(json!({
            "metadata": {"name": "default", "annotations": annotations},
            "spec": {"template": {"spec": {"requirements": requirements}}},
        }))
        .expect("a valid NodePool")
    }

    /// A node with `labels` and a claim with `annotations` and `conditions`.
    fn node(labels: Value, annotations: Value, conditions: Value) -> ClusterNode {
        let node = serde_json::from_value(json!({
            "metadata": {"name": "node-a", "labels": labels},
        }))
        .expect("a valid Node");
        let claim = serde_json::from_value(json!({
            "metadata": {"name": "claim-a", "annotations": annotations},
            "spec": {},
            "status": {"nodeName": "node-a", "conditions": conditions},
        }))
        .expect("a valid NodeClaim");
        ClusterNode {
            node: Some(node),
            node_claim: Some(claim),
        }
    }

    fn hashes(hash: &str, version: &str) -> Value {
        json!({
            NODE_POOL_HASH_ANNOTATION_KEY: hash,
            NODE_POOL_HASH_VERSION_ANNOTATION_KEY: version,
        })
    }

    const SPOT_ONLY: &str = "karpenter.sh/capacity-type";

    fn spot_only() -> Value {
        json!([{"key": SPOT_ONLY, "operator": "In", "values": ["spot"]}])
    }

    fn spot_labels() -> Value {
        json!({"karpenter.sh/nodepool": "default", SPOT_ONLY: "spot"})
    }

    #[test]
    fn not_drifted_when_everything_matches() {
        let pool = pool(hashes("h1", "v3"), spot_only());
        let node = node(spot_labels(), hashes("h1", "v3"), json!([]));
        assert_eq!(drift(&node, &pool), None);
    }

    #[test]
    fn drifted_by_condition() {
        let pool = pool(json!({}), json!([]));
        let with_reason = node(
            spot_labels(),
            json!({}),
            json!([{"type": "Drifted", "status": "True", "reason": "InstanceTypeNotFound"}]),
        );
        let reason = drift(&with_reason, &pool).expect("drifted");
        assert_eq!(
            reason,
            DriftReason::Condition {
                reason: Some("InstanceTypeNotFound".into())
            }
        );
        assert_eq!(
            reason.to_string(),
            "NodeClaim has condition Drifted=True (InstanceTypeNotFound)"
        );
        let bare = node(
            spot_labels(),
            json!({}),
            json!([{"type": "Drifted", "status": "True"}]),
        );
        assert_eq!(
            drift(&bare, &pool),
            Some(DriftReason::Condition { reason: None })
        );
        // False or Unknown is not drifted.
        for status in ["False", "Unknown"] {
            let node = node(
                spot_labels(),
                json!({}),
                json!([{"type": "Drifted", "status": status}]),
            );
            assert_eq!(drift(&node, &pool), None, "{status}");
        }
    }

    #[test]
    fn drifted_by_hash() {
        let pool = pool(hashes("new", "v3"), json!([]));
        let node = node(spot_labels(), hashes("old", "v3"), json!([]));
        let reason = drift(&node, &pool).expect("drifted");
        assert_eq!(
            reason,
            DriftReason::NodePoolHash {
                pool: "new".into(),
                claim: "old".into()
            }
        );
        assert_eq!(
            reason.to_string(),
            "NodePool template changed: karpenter.sh/nodepool-hash is \"new\" on the NodePool, \"old\" on the NodeClaim"
        );
    }

    #[test]
    fn hash_needs_both_annotations_on_both_sides_and_one_version() {
        let cases = [
            // Different hash versions: upstream changed how it hashes.
            (hashes("new", "v3"), hashes("old", "v2")),
            // Something missing on either side.
            (
                json!({NODE_POOL_HASH_ANNOTATION_KEY: "new"}),
                hashes("old", "v3"),
            ),
            (
                hashes("new", "v3"),
                json!({NODE_POOL_HASH_ANNOTATION_KEY: "old"}),
            ),
            (json!({}), hashes("old", "v3")),
            (hashes("new", "v3"), json!({})),
        ];
        for (pool_annotations, claim_annotations) in cases {
            let pool = pool(pool_annotations.clone(), json!([]));
            let node = node(spot_labels(), claim_annotations.clone(), json!([]));
            assert_eq!(
                drift(&node, &pool),
                None,
                "{pool_annotations} / {claim_annotations}"
            );
        }
    }

    #[test]
    fn drifted_by_requirements() {
        let pool = pool(json!({}), spot_only());
        let on_demand = node(
            json!({"karpenter.sh/nodepool": "default", SPOT_ONLY: "on-demand"}),
            json!({}),
            json!([]),
        );
        let reason = drift(&on_demand, &pool).expect("drifted");
        assert!(matches!(reason, DriftReason::Requirements { .. }));
        assert!(
            reason
                .to_string()
                .starts_with("node labels no longer meet the NodePool's requirements: key karpenter.sh/capacity-type"),
            "{reason}"
        );
        // Strict, as upstream: a required key the node lacks is drift too.
        let unlabelled = node(
            json!({"karpenter.sh/nodepool": "default"}),
            json!({}),
            json!([]),
        );
        assert_eq!(
            drift(&unlabelled, &pool),
            Some(DriftReason::Requirements {
                detail: "label \"karpenter.sh/capacity-type\" does not have known values".into()
            })
        );
        // Only excluding a value needs no label.
        let exclude = self::pool(
            json!({}),
            json!([{"key": "example.com/team", "operator": "NotIn", "values": ["a"]}]),
        );
        assert_eq!(drift(&unlabelled, &exclude), None);
    }

    #[test]
    fn re_derived_reasons_come_first_hash_before_requirements() {
        let pool = pool(hashes("new", "v3"), spot_only());
        let node = node(
            json!({SPOT_ONLY: "on-demand"}),
            hashes("old", "v3"),
            json!([{"type": "Drifted", "status": "True", "reason": "RequirementsDrifted"}]),
        );
        assert!(matches!(
            drift(&node, &pool),
            Some(DriftReason::NodePoolHash { .. })
        ));
        let same_hash = self::node(
            json!({SPOT_ONLY: "on-demand"}),
            hashes("new", "v3"),
            json!([{"type": "Drifted", "status": "True", "reason": "NodePoolDrifted"}]),
        );
        assert!(matches!(
            drift(&same_hash, &pool),
            Some(DriftReason::Requirements { .. })
        ));
    }
}
