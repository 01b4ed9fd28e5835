//! Relaxing a pod's soft constraints, one step per failed attempt, in upstream's
//! order: drop the first required node-affinity term (never the last one), then the
//! heaviest preferred pod-affinity term, the heaviest preferred pod-anti-affinity
//! term, the heaviest preferred node-affinity term, one `ScheduleAnyway` spread
//! constraint, and last, when some NodePool has a `PreferNoSchedule` taint,
//! tolerate every `PreferNoSchedule` taint.

use k8s_openapi::api::core::v1::{PodSpec, Toleration};

use crate::scheduling::{TAINT_EFFECT_PREFER_NO_SCHEDULE, tolerates};

/// Whether the last step (tolerating `PreferNoSchedule`) is on the ladder.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Preferences {
    pub tolerate_prefer_no_schedule: bool,
}

impl Preferences {
    /// Takes one step; false when nothing is left to relax.
    pub(crate) fn relax(&self, spec: &mut PodSpec) -> bool {
        remove_required_node_affinity_term(spec)
            || remove_heaviest_preferred_pod_affinity_term(spec)
            || remove_heaviest_preferred_pod_anti_affinity_term(spec)
            || remove_heaviest_preferred_node_affinity_term(spec)
            || remove_schedule_anyway_spread(spec)
            || (self.tolerate_prefer_no_schedule && tolerate_prefer_no_schedule(spec))
    }
}

/// Sorts by weight, heaviest first (stably, as upstream), and drops the first.
fn drop_heaviest<T>(terms: &mut Vec<T>, weight: impl Fn(&T) -> i32) -> bool {
    if terms.is_empty() {
        return false;
    }
    terms.sort_by_key(|t| std::cmp::Reverse(weight(t)));
    terms.remove(0);
    true
}

/// Drops the first required node-affinity term when another remains; false when
/// there is nothing to drop.
pub(crate) fn remove_required_node_affinity_term(spec: &mut PodSpec) -> bool {
    let required = spec
        .affinity
        .as_mut()
        .and_then(|a| a.node_affinity.as_mut())
        .and_then(|n| {
            n.required_during_scheduling_ignored_during_execution
                .as_mut()
        });
    match required {
        // Terms are ORed: dropping the first lets the next be tried; the last stays.
        Some(selector) if selector.node_selector_terms.len() > 1 => {
            selector.node_selector_terms.remove(0);
            true
        }
        _ => false,
    }
}

fn remove_heaviest_preferred_pod_affinity_term(spec: &mut PodSpec) -> bool {
    let terms = spec
        .affinity
        .as_mut()
        .and_then(|a| a.pod_affinity.as_mut())
        .and_then(|p| {
            p.preferred_during_scheduling_ignored_during_execution
                .as_mut()
        });
    terms.is_some_and(|terms| drop_heaviest(terms, |t| t.weight))
}

fn remove_heaviest_preferred_pod_anti_affinity_term(spec: &mut PodSpec) -> bool {
    let terms = spec
        .affinity
        .as_mut()
        .and_then(|a| a.pod_anti_affinity.as_mut())
        .and_then(|p| {
            p.preferred_during_scheduling_ignored_during_execution
                .as_mut()
        });
    terms.is_some_and(|terms| drop_heaviest(terms, |t| t.weight))
}

fn remove_heaviest_preferred_node_affinity_term(spec: &mut PodSpec) -> bool {
    let terms = spec
        .affinity
        .as_mut()
        .and_then(|a| a.node_affinity.as_mut())
        .and_then(|n| {
            n.preferred_during_scheduling_ignored_during_execution
                .as_mut()
        });
    terms.is_some_and(|terms| drop_heaviest(terms, |t| t.weight))
}

fn remove_schedule_anyway_spread(spec: &mut PodSpec) -> bool {
    let Some(constraints) = spec.topology_spread_constraints.as_mut() else {
        return false;
    };
    match constraints
        .iter()
        .position(|c| c.when_unsatisfiable == "ScheduleAnyway")
    {
        Some(i) => {
            // Upstream moves the last constraint into the gap; the order of what is
            // left decides which ScheduleAnyway constraint goes next.
            constraints.swap_remove(i);
            true
        }
        None => false,
    }
}

fn tolerate_prefer_no_schedule(spec: &mut PodSpec) -> bool {
    let toleration = Toleration {
        operator: Some("Exists".to_string()),
        effect: Some(TAINT_EFFECT_PREFER_NO_SCHEDULE.to_string()),
        ..Toleration::default()
    };
    let tolerations = spec.tolerations.get_or_insert_with(Vec::new);
    let probe = k8s_openapi::api::core::v1::Taint {
        key: "any".to_string(),
        effect: TAINT_EFFECT_PREFER_NO_SCHEDULE.to_string(),
        ..Default::default()
    };
    // Already tolerating every PreferNoSchedule taint: nothing to add.
    if tolerations
        .iter()
        .any(|t| t.key.as_deref().unwrap_or_default().is_empty() && tolerates(t, &probe))
    {
        return false;
    }
    tolerations.push(toleration);
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::{
        Affinity, NodeAffinity, NodeSelector, NodeSelectorTerm, PreferredSchedulingTerm,
        TopologySpreadConstraint,
    };

    #[test]
    fn the_ladder_goes_in_upstreams_order() {
        let spread = |when: &str, key: &str| TopologySpreadConstraint {
            max_skew: 1,
            topology_key: key.to_string(),
            when_unsatisfiable: when.to_string(),
            ..Default::default()
        };
        let mut spec = PodSpec {
            affinity: Some(Affinity {
                node_affinity: Some(NodeAffinity {
                    required_during_scheduling_ignored_during_execution: Some(NodeSelector {
                        node_selector_terms: vec![
                            NodeSelectorTerm::default(),
                            NodeSelectorTerm::default(),
                        ],
                    }),
                    preferred_during_scheduling_ignored_during_execution: Some(vec![
                        PreferredSchedulingTerm {
                            weight: 1,
                            ..Default::default()
                        },
                        PreferredSchedulingTerm {
                            weight: 50,
                            ..Default::default()
                        },
                    ]),
                }),
                ..Default::default()
            }),
            topology_spread_constraints: Some(vec![
                spread("ScheduleAnyway", "a"),
                spread("DoNotSchedule", "b"),
                spread("ScheduleAnyway", "c"),
            ]),
            ..Default::default()
        };
        let ladder = Preferences {
            tolerate_prefer_no_schedule: true,
        };
        let node_affinity = |s: &PodSpec| s.affinity.clone().unwrap().node_affinity.unwrap();
        assert!(ladder.relax(&mut spec));
        assert_eq!(
            node_affinity(&spec)
                .required_during_scheduling_ignored_during_execution
                .unwrap()
                .node_selector_terms
                .len(),
            1
        );
        assert!(ladder.relax(&mut spec));
        let left = node_affinity(&spec)
            .preferred_during_scheduling_ignored_during_execution
            .unwrap();
        assert_eq!(
            left.iter().map(|t| t.weight).collect::<Vec<_>>(),
            vec![1],
            "the heaviest goes first"
        );
        assert!(ladder.relax(&mut spec));
        assert!(ladder.relax(&mut spec));
        let keys = |s: &PodSpec| {
            s.topology_spread_constraints
                .clone()
                .unwrap()
                .iter()
                .map(|c| c.topology_key.clone())
                .collect::<Vec<_>>()
        };
        assert_eq!(keys(&spec), vec!["c", "b"], "swap-removed, as upstream");
        assert!(ladder.relax(&mut spec));
        assert_eq!(keys(&spec), vec!["b"]);
        assert!(
            ladder.relax(&mut spec),
            "PreferNoSchedule is tolerated last"
        );
        assert_eq!(spec.tolerations.as_ref().map(Vec::len), Some(1));
        assert!(!ladder.relax(&mut spec), "nothing is left");
    }
}
