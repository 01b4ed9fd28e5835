//! Reading pods: their keys, phases, specs, node requirements, label selectors,
//! anti-affinity terms and the taints they tolerate.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{
    NodeSelectorTerm, PodAffinityTerm, PodSpec, Taint, Toleration, WeightedPodAffinityTerm,
};
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;

use crate::pods::{PodInfo, PodKey};
use crate::scheduling::{
    DO_NOT_DISRUPT_ANNOTATION_KEY, LABEL_INSTANCE_TYPE_STABLE, RequirementError, Requirements,
    TAINT_EFFECT_NO_EXECUTE, TAINT_EFFECT_NO_SCHEDULE, normalize_label_key,
    required_node_affinity_terms, tolerates,
};

/// `namespace/name`, the namespace defaulting to `default`: the validator's
/// own reading of the pod's metadata, independent of the engine's
/// [`PodKey::of`] on purpose, only producing the same [`PodKey`] type so that
/// it compares with the plan's keys.
pub(super) fn pod_key(pod: &PodInfo) -> PodKey {
    PodKey::new(
        pod_namespace(pod),
        pod.metadata.name.as_deref().unwrap_or_default(),
    )
}

pub(super) fn pod_namespace(pod: &PodInfo) -> &str {
    pod.metadata.namespace.as_deref().unwrap_or("default")
}

pub(super) fn bound_node(pod: &PodInfo) -> Option<&str> {
    pod.node_name.as_deref().filter(|n| !n.is_empty())
}

pub(super) fn is_terminal(pod: &PodInfo) -> bool {
    let phase = pod.status.as_ref().and_then(|s| s.phase.as_deref());
    matches!(phase, Some("Succeeded" | "Failed"))
}

pub(super) fn is_daemon_pod(pod: &PodInfo) -> bool {
    pod.metadata
        .owner_references
        .iter()
        .flatten()
        .any(|o| o.kind == "DaemonSet")
}

/// Pending as upstream's `IsProvisionable` reads the pod (the rule is in
/// [`validate`](super::validate)'s documentation): no node, no nomination,
/// marked unschedulable by the kube-scheduler or with no `PodScheduled`
/// condition at all, not
/// finished, not being deleted, neither a DaemonSet's nor a Node's.
pub(super) fn is_pending(pod: &PodInfo) -> bool {
    let status = pod.status.as_ref();
    let conditions = status
        .and_then(|s| s.conditions.as_deref())
        .unwrap_or_default();
    // No PodScheduled condition says nothing otherwise; one must say Unschedulable.
    let marked = conditions
        .iter()
        .find(|c| c.type_ == "PodScheduled")
        .is_none_or(|c| c.reason.as_deref() == Some("Unschedulable"));
    let nominated = status
        .and_then(|s| s.nominated_node_name.as_deref())
        .is_some_and(|node| !node.is_empty());
    let mirror = pod
        .metadata
        .owner_references
        .iter()
        .flatten()
        .any(|o| o.api_version == "v1" && o.kind == "Node");
    bound_node(pod).is_none()
        && marked
        && !nominated
        && !is_terminal(pod)
        && pod.metadata.deletion_timestamp.is_none()
        && !is_daemon_pod(pod)
        && !mirror
}

/// Whether a pod of a node on its way out must find room elsewhere
/// (upstream's `IsReschedulable`): neither finished nor being deleted, unless
/// a StatefulSet owns it (its successor waits for it to go); owned neither
/// by a DaemonSet (`apps/v1`) nor by a Node.
pub(super) fn is_reschedulable(pod: &PodInfo) -> bool {
    let owned_by = |api_version: &str, kind: &str| {
        pod.metadata
            .owner_references
            .iter()
            .flatten()
            .any(|o| o.api_version == api_version && o.kind == kind)
    };
    let terminating = pod.metadata.deletion_timestamp.is_some();
    let active = !is_terminal(pod) && !terminating;
    (active || (terminating && owned_by("apps/v1", "StatefulSet")))
        && !owned_by("apps/v1", "DaemonSet")
        && !owned_by("v1", "Node")
}

/// Whether a reschedulable pod of a node on its way out may be left where it
/// is, so that the plan may leave it out: something may keep it from being
/// evicted now (a `karpenter.sh/do-not-disrupt` annotation, whose duration
/// the validator, having no clock, does not judge; or a PodDisruptionBudget in
/// its namespace, whose selector it does not read). A pod with neither must be
/// planned.
pub(super) fn may_stay(pod: &PodInfo, budgets: &[PodDisruptionBudget]) -> bool {
    let annotated = pod
        .metadata
        .annotations
        .as_ref()
        .is_some_and(|a| a.contains_key(DO_NOT_DISRUPT_ANNOTATION_KEY));
    let namespace = pod_namespace(pod);
    annotated
        || budgets
            .iter()
            .any(|b| b.metadata.namespace.as_deref().unwrap_or("default") == namespace)
}

/// Upstream's `IgnoredForTopology`, negated: a pod that counts for topology.
pub(super) fn counts_for_topology(pod: &PodInfo) -> bool {
    bound_node(pod).is_some() && !is_terminal(pod) && pod.metadata.deletion_timestamp.is_none()
}

pub(super) fn empty_spec() -> &'static PodSpec {
    static EMPTY: std::sync::OnceLock<PodSpec> = std::sync::OnceLock::new();
    EMPTY.get_or_init(PodSpec::default)
}

pub(super) fn spec_of(pod: &PodInfo) -> &PodSpec {
    pod.spec.as_deref().unwrap_or_else(|| empty_spec())
}

/// The alternatives a pod's node must meet one of: its `nodeSelector` with each
/// required node-affinity term's `matchExpressions` (`matchFields` is not read, as
/// upstream), or the `nodeSelector` alone without required terms. `Err` when an
/// expression cannot be read.
pub(super) fn strict_alternatives(spec: &PodSpec) -> Result<Vec<Requirements>, RequirementError> {
    let selector = Requirements::from_labels(spec.node_selector.iter().flatten());
    let terms = required_node_affinity_terms(spec);
    if terms.is_empty() {
        return Ok(vec![selector]);
    }
    terms
        .iter()
        .map(|term| {
            let expressions = Requirements::from_node_selector_requirements(
                term.match_expressions.iter().flatten(),
            )?;
            let mut combined = selector.clone();
            combined.add_all(&expressions);
            Ok(combined)
        })
        .collect()
}

/// Whether a label selector selects `labels`: `None` selects nothing, `{}`
/// everything. The validator's own reading, independent of the engine's
/// `scheduling::label_selector` on purpose: it checks the engine's plans, so
/// a defect there must not pass through both. Unlike the engine it does not
/// refuse the selectors the API server would (they never reach a live
/// cluster), so its checks on such hand-written input are looser.
pub(super) fn selects(selector: Option<&LabelSelector>, labels: &BTreeMap<String, String>) -> bool {
    let Some(selector) = selector else {
        return false;
    };
    let match_labels = selector
        .match_labels
        .iter()
        .flatten()
        .all(|(k, v)| labels.get(k) == Some(v));
    match_labels
        && selector.match_expressions.iter().flatten().all(|e| {
            let value = labels.get(&e.key);
            let listed = |v: &String| e.values.iter().flatten().any(|x| x == v);
            match e.operator.as_str() {
                "In" => value.is_some_and(listed),
                "NotIn" => !value.is_some_and(listed),
                "Exists" => value.is_some(),
                "DoesNotExist" => value.is_none(),
                _ => false,
            }
        })
}

pub(super) fn pod_labels(pod: &PodInfo) -> &BTreeMap<String, String> {
    static EMPTY: BTreeMap<String, String> = BTreeMap::new();
    pod.metadata.labels.as_ref().unwrap_or(&EMPTY)
}

/// Whether a pod (anti-)affinity term of a pod in `own_namespace` looks for pods in
/// `namespace`, whose labels `labels` reads: a namespace the term lists, or one its
/// `namespaceSelector` selects (`{}` selects every one); with neither, only the pod's
/// own.
pub(super) fn term_covers_namespace(
    term: &PodAffinityTerm,
    own_namespace: &str,
    namespace: &str,
    labels: impl FnOnce() -> BTreeMap<String, String>,
) -> bool {
    let listed = term.namespaces.as_deref().unwrap_or_default();
    if listed.iter().any(|n| n == namespace) {
        return true;
    }
    match &term.namespace_selector {
        Some(selector) => selects(Some(selector), &labels()),
        None => listed.is_empty() && namespace == own_namespace,
    }
}

pub(super) fn required_anti_affinity(spec: &PodSpec) -> &[PodAffinityTerm] {
    spec.affinity
        .as_ref()
        .and_then(|a| a.pod_anti_affinity.as_ref())
        .and_then(|a| {
            a.required_during_scheduling_ignored_during_execution
                .as_deref()
        })
        .unwrap_or_default()
}

/// Whether the taint keeps pods that do not tolerate it away.
pub(super) fn is_hard(taint: &Taint) -> bool {
    taint.effect == TAINT_EFFECT_NO_SCHEDULE || taint.effect == TAINT_EFFECT_NO_EXECUTE
}

pub(super) fn first_untolerated<'t>(
    taints: &'t [Taint],
    tolerations: &[Toleration],
) -> Option<&'t Taint> {
    taints
        .iter()
        .filter(|t| is_hard(t))
        .find(|t| !tolerations.iter().any(|tol| tolerates(tol, t)))
}

/// Whether a pod constrains the instance type: in its node selector or node
/// affinity (required or preferred), or as the topology key of a spread
/// constraint or pod (anti-)affinity term.
pub(super) fn mentions_instance_type(spec: &PodSpec) -> bool {
    let is_type = |key: &str| normalize_label_key(key) == LABEL_INSTANCE_TYPE_STABLE;
    let in_term = |term: &NodeSelectorTerm| {
        let expressions = term.match_expressions.iter().flatten();
        expressions.map(|e| e.key.as_str()).any(is_type)
    };
    let selector = spec.node_selector.iter().flatten().any(|(k, _)| is_type(k));
    let affinity = spec.affinity.as_ref();
    let node = affinity
        .and_then(|a| a.node_affinity.as_ref())
        .is_some_and(|n| {
            let required = n.required_during_scheduling_ignored_during_execution.iter();
            let preferred = n
                .preferred_during_scheduling_ignored_during_execution
                .iter();
            required.flat_map(|r| &r.node_selector_terms).any(in_term)
                || preferred.flatten().any(|p| in_term(&p.preference))
        });
    let spread = spec
        .topology_spread_constraints
        .iter()
        .flatten()
        .any(|c| is_type(&c.topology_key));
    let pod_terms = |required: Option<&Vec<PodAffinityTerm>>,
                     preferred: Option<&Vec<WeightedPodAffinityTerm>>| {
        required
            .into_iter()
            .flatten()
            .any(|t| is_type(&t.topology_key))
            || preferred
                .into_iter()
                .flatten()
                .any(|w| is_type(&w.pod_affinity_term.topology_key))
    };
    let pod_affinity = affinity
        .and_then(|a| a.pod_affinity.as_ref())
        .is_some_and(|a| {
            pod_terms(
                a.required_during_scheduling_ignored_during_execution
                    .as_ref(),
                a.preferred_during_scheduling_ignored_during_execution
                    .as_ref(),
            )
        });
    let pod_anti_affinity = affinity
        .and_then(|a| a.pod_anti_affinity.as_ref())
        .is_some_and(|a| {
            pod_terms(
                a.required_during_scheduling_ignored_during_execution
                    .as_ref(),
                a.preferred_during_scheduling_ignored_during_execution
                    .as_ref(),
            )
        });
    selector || node || spread || pod_affinity || pod_anti_affinity
}
