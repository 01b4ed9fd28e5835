//! Drift: whether a node no longer matches what its NodePool would launch
//! today, and why.
//!
//! Upstream splits this in two. The NodeClaim disruption controller
//! (`pkg/controllers/nodeclaim/disruption/drift.go`) decides whether a claim has
//! drifted, and only for a claim whose `Launched` condition is true. It checks
//! in order: the NodePool's template hash against the claim's
//! (`NodePoolDrifted`), the NodePool's requirements against the claim's labels
//! (`RequirementsDrifted`), whether the claim's instance type and an offering
//! for its zone and capacity type still exist (`InstanceTypeNotFound`, once
//! the claim is more than an hour old), and the cloud provider's own checks.
//! It records the first reason found as the claim's `Drifted` condition, and
//! the disruption controller's Drift method only reads that condition.
//!
//! A snapshot may be older or newer than the condition (a NodePool edited after
//! the dump, a hand-written scenario without conditions), so [`drift_with`] re-runs
//! the checks and keeps the condition as a last resort:
//!
//! 1. the template hash, as upstream;
//! 2. the requirements, as upstream;
//! 3. the instance type and its offerings ([`instance_type`]), as upstream;
//! 4. the cloud provider's reason, when it gave one;
//! 5. the claim's `Drifted=True` condition, which stands for any reason
//!    recorded before the snapshot that the checks above no longer see. A
//!    node whose condition says drifted is reported with a re-derived reason
//!    when one applies, since it names what changed, and with
//!    [`DriftReason::Condition`] otherwise.
//!
//! A condition that is present but `False` is not consulted: the checks
//! still apply (upstream's controller would set the condition on its next
//! pass, at most five minutes later).

mod instance_type;

use std::fmt;
use std::time::Duration;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use crate::api::Conditions as _;
use crate::api::{NodeClaim, NodePool, condition_types};
use crate::cloudprovider::InstanceType;
use crate::fast_hash::HashMap;
use crate::scheduling::{
    NODE_POOL_HASH_ANNOTATION_KEY, NODE_POOL_HASH_VERSION_ANNOTATION_KEY, Requirement,
    Requirements, WellKnownLabels,
};

pub(super) use instance_type::INSTANCE_TYPE_CHECK_AGE;

/// The reason upstream's requirement check gives.
const REQUIREMENTS_DRIFTED: &str = "RequirementsDrifted";
/// The reason upstream's hash check gives.
const NODE_POOL_DRIFTED: &str = "NodePoolDrifted";
/// The reason upstream's instance type check gives.
const INSTANCE_TYPE_NOT_FOUND: &str = "InstanceTypeNotFound";

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
    /// The NodeClaim's labels no longer meet the NodePool's requirements
    /// (upstream `RequirementsDrifted`).
    Requirements {
        /// The first requirement not met, for a person.
        detail: String,
    },
    /// The claim's instance type is gone from the provider's types for its
    /// pool, or no offering of it matches the claim's zone and capacity type
    /// (upstream `InstanceTypeNotFound`).
    InstanceTypeNotFound {
        /// What is missing, for a person.
        detail: String,
    },
    /// A reason the cloud provider reports ([`Snapshot::provider_drift`](crate::snapshot::Snapshot::provider_drift)).
    Provider(String),
}

impl DriftReason {
    /// Upstream's name for the reason, as its `Drifted` condition records
    /// it: `NodePoolDrifted`, `RequirementsDrifted`, `InstanceTypeNotFound`,
    /// the provider's (the text before a `:` of what it reported, as the
    /// Azure provider's `ImageDrift: ...`), or the condition's own (`Drifted`
    /// when it has none).
    pub(super) fn name(&self) -> &str {
        match self {
            Self::Condition { reason } => reason
                .as_deref()
                .filter(|r| !r.is_empty())
                .unwrap_or(condition_types::DRIFTED),
            Self::NodePoolHash { .. } => NODE_POOL_DRIFTED,
            Self::Requirements { .. } => REQUIREMENTS_DRIFTED,
            Self::InstanceTypeNotFound { .. } => INSTANCE_TYPE_NOT_FOUND,
            Self::Provider(reported) => provider_reason(reported),
        }
    }
}

/// The reason name in what a provider reported: the word before a `:`, or
/// the whole text when it has no such prefix.
fn provider_reason(reported: &str) -> &str {
    match reported.split_once(':') {
        Some((name, _)) if !name.is_empty() && !name.contains(char::is_whitespace) => name,
        _ => reported,
    }
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
                    "NodeClaim labels no longer meet the NodePool's requirements: {detail}"
                )
            }
            Self::InstanceTypeNotFound { detail } => f.write_str(detail),
            Self::Provider(reason) => write!(f, "cloud provider reports drift: {reason}"),
        }
    }
}

/// What the drift checks read besides the claim and its pool.
#[derive(Clone, Copy, Debug)]
pub(super) struct DriftInputs<'a> {
    /// The provider's instance types for the claim's pool, unavailable
    /// offerings included (upstream's `GetInstanceTypes`).
    pub instance_types: &'a [InstanceType],
    /// The index of each of `instance_types` by name, when the caller keeps
    /// one: a lookup instead of a search through a long list.
    pub by_name: Option<&'a HashMap<&'a str, usize>>,
    /// How long the claim has existed at the moment of planning: the
    /// instance type check waits until it is more than
    /// [`INSTANCE_TYPE_CHECK_AGE`].
    pub age: Duration,
    /// The reason the cloud provider's own check (`is_drifted`) gave for the
    /// claim, if it found one.
    pub provider: Option<&'a str>,
}

/// Whether `claim` has drifted from `pool`, and why (see the
/// [module documentation](self) for the order); `None` for a claim that is
/// not `Launched`, as upstream clears the condition of such a claim.
///
/// - The hash check needs both annotations on both objects, with equal hash
///   versions: a missing annotation or a version change (upstream re-hashes
///   after changing how it hashes) never counts as drift.
/// - The requirement check reads `spec.template.spec.requirements` only
///   (template labels are covered by the hash) and checks them as upstream
///   does, strictly, against the NodeClaim's labels (the labels Karpenter
///   wrote at launch): every key the pool requires with `In`, `Exists`,
///   `Gt` or `Lt` must be a label of the claim with a value the requirement
///   admits; a `NotIn` or `DoesNotExist` key must not be contradicted.
///   Requirements that cannot be read are skipped (the input's validation
///   refuses them).
/// - The instance type check runs only once the claim is older than
///   [`INSTANCE_TYPE_CHECK_AGE`] (see [`instance_type`]).
pub(super) fn drift_with(
    claim: &NodeClaim,
    pool: &NodePool,
    inputs: &DriftInputs<'_>,
) -> Option<DriftReason> {
    if !is_launched(claim) {
        return None;
    }
    hash_drift(pool, claim)
        .or_else(|| requirements_drift(claim, pool))
        .or_else(|| {
            (inputs.age > INSTANCE_TYPE_CHECK_AGE)
                .then(|| instance_type::not_found(inputs, claim))
                .flatten()
        })
        .or_else(|| {
            inputs
                .provider
                .map(|reason| DriftReason::Provider(reason.to_owned()))
        })
        .or_else(|| condition_drift(claim))
}

/// Whether the claim's `Launched` condition is true.
fn is_launched(claim: &NodeClaim) -> bool {
    claim
        .status
        .as_ref()
        .is_some_and(|s| s.conditions.is_true(condition_types::LAUNCHED))
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

fn requirements_drift(claim: &NodeClaim, pool: &NodePool) -> Option<DriftReason> {
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
    let labels = Requirements::from_labels(claim.metadata.labels.iter().flatten());
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
mod tests;
