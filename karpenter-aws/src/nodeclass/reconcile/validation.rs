//! `ValidationSucceeded` as upstream's validation reconciler sets it: the
//! cluster CIDR AL2023 needs, the kubelet configuration, the conditions
//! the validation rests on, the class's tags, then whether the controller
//! may launch at all, asked of EC2 by dry runs and remembered for 30
//! minutes.

use std::collections::BTreeMap;

use jiff::{SignedDuration, Timestamp};
use karpenter_core::api::{Condition, ConditionStatus, fnv1a64};
use karpenter_core::resources::parse_milli;

use super::dry_runs::{Refusal, ValidationError, dry_runs};
use crate::ec2::Ec2Api;
use crate::launch::launch_tags;
use crate::nodeclass::resolve::conditions::{Stamp, set, set_true};
use crate::nodeclass::{
    AmiFamily, EC2NodeClass, EC2NodeClassStatus, MaxPods, condition_types as types,
};

/// How long a validation's outcome is kept (upstream's `ValidationTTL`).
pub const VALIDATION_TTL: SignedDuration = SignedDuration::from_mins(30);

/// The conditions the dry runs wait for.
const REQUIRED: [&str; 4] = [
    types::AMIS_READY,
    types::INSTANCE_PROFILE_READY,
    types::SECURITY_GROUPS_READY,
    types::SUBNETS_READY,
];
/// Upstream's message while a required condition is not True.
const AWAITING: &str = "Awaiting AMI, Instance Profile, Security Group, and Subnet resolution";

/// Tag keys exactly matched by upstream's restricted tag patterns.
const RESTRICTED_KEYS: [&str; 4] = [
    "karpenter.sh/nodepool",
    "eks:eks-cluster-name",
    "karpenter.k8s.aws/ec2nodeclass",
    "karpenter.sh/nodeclaim",
];
/// The prefix of the restricted cluster-ownership tag keys.
const CLUSTER_TAG_PREFIX: &str = "kubernetes.io/cluster/";

/// The validation's settings and its outcomes kept per class, as
/// upstream's validation reconciler holds them: one for the controller's
/// life, passed to every [`reconcile_status`](super::reconcile_status).
#[derive(Clone, Debug, Default)]
pub struct Validation {
    /// `DISABLE_DRY_RUN`: a class passing the other checks is valid
    /// without asking EC2.
    pub dry_run_disabled: bool,
    /// Whether the cluster's service CIDR is known; AL2023 classes are not
    /// valid without it (their nodes' `NodeConfig` carries it).
    pub cluster_cidr_known: bool,
    /// The `NodeClassCEL` feature gate: without it, a kubelet
    /// configuration holding a CEL expression is not valid.
    pub node_class_cel: bool,
    /// Outcomes by class name and hash: when they lapse, and the refusal
    /// (`None` for valid).
    outcomes: BTreeMap<String, (Timestamp, Option<Refusal>)>,
}

impl Validation {
    /// Settings with nothing kept yet, the `NodeClassCEL` gate off.
    pub fn new(dry_run_disabled: bool, cluster_cidr_known: bool) -> Self {
        Validation {
            dry_run_disabled,
            cluster_cidr_known,
            node_class_cel: false,
            outcomes: BTreeMap::new(),
        }
    }

    /// How many outcomes are kept (lapsed ones until the next reconcile).
    pub fn len(&self) -> usize {
        self.outcomes.len()
    }

    /// Whether no outcome is kept.
    pub fn is_empty(&self) -> bool {
        self.outcomes.is_empty()
    }

    /// Drops the outcomes lapsed by `now`.
    fn prune(&mut self, now: Timestamp) {
        self.outcomes.retain(|_, (until, _)| *until > now);
    }

    /// Keeps `outcome` under `key` for [`VALIDATION_TTL`] from `now`.
    fn keep(&mut self, key: String, now: Timestamp, outcome: Option<Refusal>) {
        let until = now.saturating_add(VALIDATION_TTL).unwrap_or(now);
        self.outcomes.insert(key, (until, outcome));
    }
}

/// Sets `ValidationSucceeded` to `status` for `reason`.
fn set_validated(
    conditions: &mut Vec<Condition>,
    stamp: Stamp,
    status: ConditionStatus,
    reason: &str,
    message: &str,
) {
    let validated = types::VALIDATION_SUCCEEDED;
    set(conditions, stamp, validated, status, reason, message);
}

/// Sets `ValidationSucceeded` in `conditions` for `class` with its newly
/// resolved `status`, in upstream's order; the first check that fails
/// decides. Only the dry runs are kept in `validation`.
pub(crate) async fn validate(
    ec2: &impl Ec2Api,
    validation: &mut Validation,
    class: &EC2NodeClass,
    status: &EC2NodeClassStatus,
    conditions: &mut Vec<Condition>,
    stamp: Stamp,
    cluster_name: &str,
) -> Result<(), ValidationError> {
    validation.prune(stamp.now);
    if let Some((reason, message)) = spec_problem(validation, class) {
        set_validated(conditions, stamp, ConditionStatus::False, reason, &message);
        return Ok(());
    }
    let dependency = |wanted: ConditionStatus| {
        REQUIRED.iter().any(|type_| {
            conditions
                .iter()
                .any(|c| c.type_ == *type_ && c.status == wanted)
        })
    };
    let (failed, unknown) = (
        dependency(ConditionStatus::False),
        dependency(ConditionStatus::Unknown) || REQUIRED.iter().any(|t| absent(conditions, t)),
    );
    if failed || unknown {
        let status = if failed {
            ConditionStatus::False
        } else {
            ConditionStatus::Unknown
        };
        set_validated(conditions, stamp, status, "DependenciesNotReady", AWAITING);
        return Ok(());
    }
    if has_restricted_tag(class) {
        // Upstream's message; the keys are in its log's values only.
        let (reason, message) = ("TagValidationFailed", "tags failed validation requirements");
        set_validated(conditions, stamp, ConditionStatus::False, reason, message);
        return Ok(());
    }
    let tags = launch_tags(class, "", cluster_name);
    let key = cache_key(class, status, &tags);
    let outcome = match validation.outcomes.get(&key) {
        Some((_, outcome)) => outcome.clone(),
        None => {
            let outcome = if validation.dry_run_disabled {
                None
            } else {
                dry_runs(ec2, class, status, &tags).await?
            };
            if outcome.as_ref().is_none_or(|refusal| refusal.kept) {
                validation.keep(key, stamp.now, outcome.clone());
            }
            outcome
        }
    };
    match outcome {
        None => set_true(conditions, stamp, types::VALIDATION_SUCCEEDED),
        Some(refusal) => set_validated(
            conditions,
            stamp,
            ConditionStatus::False,
            refusal.reason,
            &refusal.message,
        ),
    }
    Ok(())
}

/// What upstream checks before the dependencies, in its order: the
/// cluster CIDR AL2023 needs, the kubelet configuration, the
/// `NodeClassCEL` gate. The first problem's reason and message.
fn spec_problem(validation: &Validation, class: &EC2NodeClass) -> Option<(&'static str, String)> {
    if class.ami_family() == Some(AmiFamily::AL2023) && !validation.cluster_cidr_known {
        let message = "Failed to detect the cluster CIDR";
        return Some(("ClusterCIDRResolutionFailed", message.to_owned()));
    }
    if let Some(message) = kubelet_problems(class) {
        return Some(("InvalidKubeletConfiguration", message));
    }
    if has_expression(class) && !validation.node_class_cel {
        let message =
            "spec.kubelet contains a CEL expression, but the NodeClassCEL feature gate is disabled";
        return Some(("KubeletExpressionsDisabled", message.to_owned()));
    }
    None
}

/// Whether `type_` is not in `conditions` at all (not yet reconciled).
fn absent(conditions: &[Condition], type_: &str) -> bool {
    !conditions.iter().any(|c| c.type_ == type_)
}

/// The kubelet problems of `class`'s spec joined by `; `, as upstream's
/// `InvalidKubeletConfiguration` message; `None` when there are none.
fn kubelet_problems(class: &EC2NodeClass) -> Option<String> {
    let invalid = class.validate().err()?;
    let messages: Vec<String> = invalid
        .problems
        .iter()
        .filter(|p| p.field().starts_with("kubelet"))
        .map(ToString::to_string)
        .collect();
    (!messages.is_empty()).then(|| messages.join("; "))
}

/// Whether `spec.kubelet` holds a CEL expression: `maxPods` as one, or a
/// reserved amount that is not a quantity.
fn has_expression(class: &EC2NodeClass) -> bool {
    let Some(kubelet) = &class.spec.kubelet else {
        return false;
    };
    let reserved = [&kubelet.kube_reserved, &kubelet.system_reserved];
    matches!(kubelet.max_pods, Some(MaxPods::Expression(_)))
        || reserved
            .into_iter()
            .flatten()
            .flat_map(BTreeMap::values)
            .any(|value| parse_milli(value).is_err())
}

/// Whether `spec.tags` has a key Karpenter sets itself.
fn has_restricted_tag(class: &EC2NodeClass) -> bool {
    let tags = class.spec.tags.as_ref();
    tags.is_some_and(|tags| tags.keys().any(|key| is_restricted(key)))
}

/// Whether upstream's `RestrictedTagPatterns` match `key`: the exact keys,
/// or `kubernetes.io/cluster/` and a cluster name (alphanumeric first,
/// then alphanumerics, `-` and `_`).
fn is_restricted(key: &str) -> bool {
    if RESTRICTED_KEYS.contains(&key) {
        return true;
    }
    let Some(cluster) = key.strip_prefix(CLUSTER_TAG_PREFIX) else {
        return false;
    };
    let mut chars = cluster.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphanumeric())
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}

/// The outcome's key, as upstream's: the class's name and a hash of what
/// the dry runs ask about (the resolved subnets, security groups, images
/// and instance profile, the spec, the annotations, the launch's tags).
fn cache_key(
    class: &EC2NodeClass,
    status: &EC2NodeClassStatus,
    tags: &BTreeMap<String, String>,
) -> String {
    let hashed = serde_json::json!([
        status.subnets,
        status.security_groups,
        status.amis,
        status.instance_profile,
        class.spec,
        class.metadata.annotations,
        tags,
    ]);
    let hash = fnv1a64(hashed.to_string().as_bytes());
    format!("{}:{hash:016x}", class.name().unwrap_or_default())
}
