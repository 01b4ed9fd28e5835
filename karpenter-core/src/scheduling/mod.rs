//! Karpenter's requirement algebra, well-known and restricted labels, and
//! taint/toleration matching (upstream `pkg/scheduling` and
//! `pkg/apis/v1/labels.go`).
//!
//! A [`Requirement`] is the set of label values a node may carry for one key.
//! It is stored either as listed values (`In`, or `DoesNotExist` when none
//! are listed) or as a *complement*, every value except those listed (`NotIn`,
//! or `Exists` when none are). Numeric operators are complements with
//! inclusive integer bounds: `Gt 4` is "everything" bounded to `>= 5`, and
//! once a bound is set only integers within it belong to the set.
//!
//! Intersection stays in this form: the result is a complement only if both
//! sides are; bounds take the tighter side and, when they cross, leave the
//! empty set; the values are the union of two complements' exclusions, the
//! listed values minus the other's exclusions, or the common listed values;
//! values outside the bounds are dropped; a listed set keeps no bounds.
//! [`Requirements`] holds one requirement per key and intersects on
//! [`Requirements::add`]; [`Requirements::compatible`] asks whether a pod's
//! requirements can be met by a NodePool's or a node's.
//!
//! Everything is deterministic (sorted storage, no random choices), so the
//! same inputs always produce the same output.

mod capacity_type;
mod error;
pub(crate) mod label_selector;
mod labels;
mod operator;
mod requirement;
mod requirements;
mod selector;
mod taints;
mod validation;
mod values;

#[cfg(test)]
mod tests;

pub use capacity_type::{CapacityType, UnknownCapacityType};
pub use error::MAX_MIN_VALUES;
pub use error::RequirementError;
pub use labels::{
    ARCHITECTURE_AMD64, ARCHITECTURE_ARM64, CAPACITY_TYPE_LABEL_KEY, CAPACITY_TYPE_ON_DEMAND,
    CAPACITY_TYPE_RESERVED, CAPACITY_TYPE_SPOT, CORE_WELL_KNOWN_LABELS,
    DO_NOT_DISRUPT_ANNOTATION_KEY, KARPENTER_GROUP, LABEL_ARCH_BETA, LABEL_ARCH_STABLE,
    LABEL_FAILURE_DOMAIN_BETA_REGION, LABEL_FAILURE_DOMAIN_BETA_ZONE, LABEL_HOSTNAME,
    LABEL_INSTANCE_TYPE_BETA, LABEL_INSTANCE_TYPE_STABLE, LABEL_NAMESPACE_NAME, LABEL_OS_BETA,
    LABEL_OS_STABLE, LABEL_TOPOLOGY_REGION, LABEL_TOPOLOGY_ZONE, LABEL_WINDOWS_BUILD,
    NODE_CLAIM_MIN_VALUES_RELAXED_ANNOTATION_KEY, NODE_CLAIM_TERMINATION_TIMESTAMP_ANNOTATION_KEY,
    NODE_DO_NOT_SYNC_TAINTS_LABEL_KEY, NODE_INITIALIZED_LABEL_KEY, NODE_POOL_HASH_ANNOTATION_KEY,
    NODE_POOL_HASH_VERSION, NODE_POOL_HASH_VERSION_ANNOTATION_KEY, NODE_POOL_LABEL_KEY,
    NODE_REGISTERED_LABEL_KEY, NORMALIZED_LABELS, RESTRICTED_LABEL_DOMAINS, RESTRICTED_LABELS,
    TERMINATION_FINALIZER, WELL_KNOWN_LABELS_FOR_OFFERINGS, WellKnownLabels,
    check_restricted_label, label_domain, normalize_label_key,
};
pub use operator::{Operator, UnknownOperatorError};
pub use requirement::Requirement;
pub use requirements::{
    IncompatibleError, Requirements, has_preferred_node_affinity, required_node_affinity_terms,
};
pub use selector::SelectorRequirement;
pub use taints::{
    DISRUPTED_NO_SCHEDULE_TAINT, DISRUPTED_TAINT_KEY, DisplayTaint,
    KNOWN_EPHEMERAL_TAINT_KEY_PREFIXES, KNOWN_EPHEMERAL_TAINTS, TAINT_EFFECT_NO_EXECUTE,
    TAINT_EFFECT_NO_SCHEDULE, TAINT_EFFECT_PREFER_NO_SCHEDULE, TAINT_EXTERNAL_CLOUD_PROVIDER,
    TAINT_NODE_NOT_READY, TAINT_NODE_UNREACHABLE, TaintError, TaintTemplate,
    UNREGISTERED_NO_EXECUTE_TAINT, UNREGISTERED_TAINT_KEY, is_known_ephemeral_taint, merge_taints,
    taints_match, tolerates, tolerates_all, uninitialized_node_taints,
};
pub use validation::{
    validate_label_key, validate_label_value, validate_pod_spec, validate_requirement,
};
