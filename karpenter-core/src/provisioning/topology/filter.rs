//! Which nodes a topology spread constraint counts, after upstream's
//! `topologynodefilter.go` and Kubernetes' `nodeAffinityPolicy` and
//! `nodeTaintsPolicy`.
//!
//! With `nodeAffinityPolicy: Honor` (the default) only nodes the pod could be
//! placed on by its `nodeSelector` and required node affinity count; with
//! `nodeTaintsPolicy: Honor` (not the default) only nodes whose taints the
//! pod tolerates count. Pod (anti-)affinity counts on every node, so its
//! groups carry the filter that lets every node through.

use std::hash::{Hash, Hasher};

use k8s_openapi::api::core::v1::{PodSpec, Taint, Toleration, TopologySpreadConstraint};

use crate::scheduling::{Requirements, WellKnownLabels, tolerates_all};

/// Whether a node inclusion policy counts a node property or ignores it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(super) enum Policy {
    /// The property decides whether the node counts.
    Honor,
    /// Every node counts, whatever the property.
    Ignore,
}

impl Policy {
    /// Reads a policy field: `Honor` or `Ignore`, else `default`.
    fn read(value: Option<&str>, default: Policy) -> Policy {
        match value {
            Some("Honor") => Policy::Honor,
            Some("Ignore") => Policy::Ignore,
            _ => default,
        }
    }
}

/// The node filter of one topology group. It is part of the group's identity,
/// so it keeps only what its policies look at.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub(super) struct NodeFilter {
    /// Under `nodeAffinityPolicy: Honor`, the pod's node selector terms (its
    /// `nodeSelector` combined with each required node-affinity term); a node
    /// counts if it is compatible with one. `None` for a term that cannot be
    /// read, which no node meets. Unset under `Ignore`.
    terms: Option<Box<[Option<Requirements>]>>,
    /// Under `nodeTaintsPolicy: Honor`, the pod's tolerations; a node counts
    /// if they tolerate all its taints. Unset under `Ignore`.
    tolerations: Option<Tolerations>,
}

impl NodeFilter {
    /// The filter that lets every node through, for pod (anti-)affinity.
    pub(super) fn everything() -> NodeFilter {
        NodeFilter::default()
    }

    /// The filter of spread constraint `constraint` of a pod with `spec`.
    pub(super) fn for_spread(spec: &PodSpec, constraint: &TopologySpreadConstraint) -> NodeFilter {
        let affinity = Policy::read(constraint.node_affinity_policy.as_deref(), Policy::Honor);
        let taints = Policy::read(constraint.node_taints_policy.as_deref(), Policy::Ignore);
        NodeFilter {
            terms: (affinity == Policy::Honor).then(|| node_selector_terms(spec)),
            tolerations: (taints == Policy::Honor)
                .then(|| Tolerations(spec.tolerations.clone().unwrap_or_default().into())),
        }
    }

    /// The tolerations a node's taints are checked against, under
    /// `nodeTaintsPolicy: Honor`.
    pub(super) fn honored_tolerations(&self) -> Option<&[Toleration]> {
        self.tolerations.as_ref().map(|t| &*t.0)
    }

    /// Whether a node with `requirements` and `taints` counts. `allow_undefined`
    /// lists the label keys the node may leave undefined (the provider's
    /// well-known labels for a new NodeClaim, none for a real node).
    pub(super) fn matches(
        &self,
        requirements: &Requirements,
        taints: &[Taint],
        allow_undefined: &WellKnownLabels,
    ) -> bool {
        // No term at all (an empty `nodeSelectorTerms`) constrains nothing.
        let affinity_ok = self.terms.as_deref().is_none_or(|terms| {
            terms.is_empty()
                || terms
                    .iter()
                    .flatten()
                    .any(|term| requirements.is_compatible(term, allow_undefined))
        });
        affinity_ok
            && self
                .tolerations
                .as_ref()
                .is_none_or(|t| tolerates_all(taints, &t.0).is_ok())
    }
}

/// The pod's `nodeSelector`, alone when it has no required node affinity,
/// else combined with each required term (the terms are alternatives).
fn node_selector_terms(spec: &PodSpec) -> Box<[Option<Requirements>]> {
    let selector = Requirements::from_labels(spec.node_selector.iter().flatten());
    let required = spec
        .affinity
        .as_ref()
        .and_then(|a| a.node_affinity.as_ref())
        .and_then(|n| {
            n.required_during_scheduling_ignored_during_execution
                .as_ref()
        });
    let Some(required) = required else {
        return Box::new([Some(selector)]);
    };
    required
        .node_selector_terms
        .iter()
        .map(|term| {
            let expressions = term.match_expressions.iter().flatten();
            let mut combined = selector.clone();
            combined.add_all(&Requirements::from_node_selector_requirements(expressions).ok()?);
            Some(combined)
        })
        .collect()
}

/// Tolerations with equality and hashing over every field, so filters that
/// honour taints can be part of a group's identity.
#[derive(Clone, Debug, PartialEq)]
struct Tolerations(Box<[Toleration]>);

impl Eq for Tolerations {}

impl Hash for Tolerations {
    fn hash<H: Hasher>(&self, state: &mut H) {
        state.write_usize(self.0.len());
        for toleration in &self.0 {
            toleration.key.hash(state);
            toleration.operator.hash(state);
            toleration.value.hash(state);
            toleration.effect.hash(state);
            toleration.toleration_seconds.hash(state);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scheduling::Requirement;

    fn spec(node_selector: &[(&str, &str)]) -> PodSpec {
        PodSpec {
            node_selector: Some(
                node_selector
                    .iter()
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .collect(),
            ),
            ..PodSpec::default()
        }
    }

    fn spread() -> TopologySpreadConstraint {
        TopologySpreadConstraint {
            max_skew: 1,
            topology_key: "topology.kubernetes.io/zone".into(),
            when_unsatisfiable: "DoNotSchedule".into(),
            ..TopologySpreadConstraint::default()
        }
    }

    /// As upstream's `TopologyNodeFilter.Matches`: a new NodeClaim counts when
    /// its requirements are `Compatible` with one of the owner's terms, keys the
    /// claim leaves undefined allowed only when well known
    /// (`AllowUndefinedWellKnownLabels`); a real node's labels must define them.
    #[test]
    fn an_undefined_key_counts_on_a_claim_only_when_well_known() {
        let well_known = WellKnownLabels::core();
        let strict = WellKnownLabels::empty();
        let claim: Requirements = [Requirement::in_values(
            "topology.kubernetes.io/zone",
            ["zone-a"],
        )]
        .into_iter()
        .collect();
        // The owner selects a well-known key the claim does not define.
        let by_arch = NodeFilter::for_spread(&spec(&[("kubernetes.io/arch", "amd64")]), &spread());
        assert!(by_arch.matches(&claim, &[], well_known));
        assert!(!by_arch.matches(&claim, &[], &strict));
        // A custom key the claim does not define: the claim does not count.
        let by_team = NodeFilter::for_spread(&spec(&[("example.com/team", "red")]), &spread());
        assert!(!by_team.matches(&claim, &[], well_known));
        // Defined with the value, it counts; with another value, it does not.
        let mut red = claim.clone();
        red.add(Requirement::in_values("example.com/team", ["red"]));
        assert!(by_team.matches(&red, &[], well_known));
        let mut blue = claim.clone();
        blue.add(Requirement::in_values("example.com/team", ["blue"]));
        assert!(!by_team.matches(&blue, &[], well_known));
        // nodeAffinityPolicy: Ignore counts every node.
        let mut ignore = spread();
        ignore.node_affinity_policy = Some("Ignore".into());
        let ignoring = NodeFilter::for_spread(&spec(&[("example.com/team", "red")]), &ignore);
        assert!(ignoring.matches(&claim, &[], &strict));
    }
}
