//! Topology: required pod anti-affinity on hostname and zone, and zonal
//! `DoNotSchedule` topology spread.

use std::collections::{BTreeMap, BTreeSet};

use crate::pods::PodInfo;
use k8s_openapi::api::core::v1::{PodSpec, TopologySpreadConstraint};

use super::index::{Checker, Host, Placed};
use super::pods::{
    counts_for_topology, pod_key, pod_labels, pod_namespace, required_anti_affinity, selects,
    spec_of, strict_alternatives, term_covers_namespace,
};
use super::pools::{pool_requirements, pool_usable};
use super::violation::{Rule, Subject, Violation};
use crate::fast_hash::HashSet;
use crate::pods::PodKey;
use crate::resources;
use crate::scheduling::{
    LABEL_HOSTNAME, LABEL_TOPOLOGY_ZONE, Requirements, WellKnownLabels, normalize_label_key,
    required_node_affinity_terms, tolerates_all,
};

impl<'s> Checker<'s> {
    /// Required anti-affinity on hostname and zone.
    pub(super) fn check_anti_affinity(
        &self,
        placed: &[Placed<'s>],
        moved: &HashSet<*const PodInfo>,
        out: &mut Vec<Violation>,
    ) {
        // Every pod in a domain: (pod, key, is new).
        struct Member<'p> {
            pod: &'p PodInfo,
            key: PodKey,
            new: bool,
        }
        for topology_key in [LABEL_HOSTNAME, LABEL_TOPOLOGY_ZONE] {
            let mut domains: BTreeMap<String, Vec<Member<'s>>> = BTreeMap::new();
            for p in placed {
                let domain = match (topology_key, &p.host) {
                    (LABEL_HOSTNAME, Host::Claim(i)) => Some(format!("claim #{i}")),
                    (LABEL_HOSTNAME, Host::Node(name)) => Some(format!("node {name:?}")),
                    _ => p.zone.as_ref().map(|z| format!("zone {z:?}")),
                };
                if let Some(domain) = domain {
                    domains.entry(domain).or_default().push(Member {
                        pod: p.pod,
                        key: p.key.clone(),
                        new: true,
                    });
                }
            }
            for (name, pods) in &self.bound {
                let domain = match topology_key {
                    LABEL_HOSTNAME => Some(format!("node {name:?}")),
                    _ => self
                        .nodes
                        .get(name)
                        .and_then(|n| n.labels())
                        .and_then(|l| l.get(LABEL_TOPOLOGY_ZONE))
                        .map(|z| format!("zone {z:?}")),
                };
                let Some(domain) = domain else { continue };
                for pod in pods
                    .iter()
                    .filter(|p| counts_for_topology(p) && !moved.contains(&std::ptr::from_ref(**p)))
                {
                    domains.entry(domain.clone()).or_default().push(Member {
                        pod,
                        key: pod_key(pod),
                        new: false,
                    });
                }
            }
            for (domain, members) in &domains {
                for a in members {
                    let terms = required_anti_affinity(spec_of(a.pod));
                    for term in terms
                        .iter()
                        .filter(|t| normalize_label_key(&t.topology_key) == topology_key)
                    {
                        for b in members {
                            if std::ptr::eq(a.pod, b.pod) || !(a.new || b.new) {
                                continue;
                            }
                            let namespace = pod_namespace(b.pod);
                            if term_covers_namespace(term, pod_namespace(a.pod), namespace, || {
                                self.namespace_labels(namespace)
                            }) && selects(term.label_selector.as_ref(), pod_labels(b.pod))
                            {
                                let subject = if a.new { a.key.clone() } else { b.key.clone() };
                                out.push(Violation {
                                    rule: Rule::AntiAffinity,
                                    subject: Subject::Pod(subject),
                                    detail: format!("{} and {} share {domain}, but {}'s required anti-affinity on {topology_key} selects {}", a.key, b.key, a.key, b.key),
                                });
                            }
                        }
                    }
                }
            }
        }
    }

    /// Zonal `DoNotSchedule` topology spread: see [`validate`](super::validate), "Zonal spread".
    pub(super) fn check_spread(
        &self,
        placed: &[Placed<'s>],
        moved: &HashSet<*const PodInfo>,
        out: &mut Vec<Violation>,
    ) {
        for ((namespace, _, _), (constraint, members)) in &spread_groups(placed) {
            let group = SpreadGroup {
                placed,
                moved,
                namespace,
                constraint,
                members,
            };
            self.check_spread_group(&group, out);
        }
    }

    /// [`Rule::TopologySpread`] for one group: no zone holding its new pods
    /// holds more selected pods than `maxSkew` over the fewest in the zones
    /// they could go to. Groups the check cannot judge surely (a selected
    /// pod outside the group, or more than one node affinity term) are
    /// skipped.
    fn check_spread_group(&self, group: &SpreadGroup<'_, 's>, out: &mut Vec<Violation>) {
        let (placed, members, constraint) = (group.placed, group.members, group.constraint);
        let selector = constraint.label_selector.as_ref();
        let member_set: BTreeSet<usize> = members.iter().copied().collect();
        let outsider = placed.iter().enumerate().find(|(i, p)| {
            pod_namespace(p.pod) == group.namespace
                && selects(selector, pod_labels(p.pod))
                && !member_set.contains(i)
        });
        let first = spec_of(placed[members[0]].pod);
        if outsider.is_some() || required_node_affinity_terms(first).len() > 1 {
            return;
        }
        let Ok(filter) = strict_alternatives(first) else {
            return;
        };
        let counts = self.selected_per_zone(group, &filter);
        for (zone, (min, pod)) in self.lenient_bounds(group, &filter, &counts) {
            let count = counts.get(zone).copied().unwrap_or(0);
            if count > i64::from(constraint.max_skew) + min {
                let eligible = self.eligible_zones(
                    placed
                        .iter()
                        .find(|p| &p.key == pod)
                        .map_or(placed[members[0]].pod, |p| p.pod),
                    &filter,
                );
                let all: Vec<String> = eligible
                    .iter()
                    .map(|z| format!("{z}={}", counts.get(z).copied().unwrap_or(0)))
                    .collect();
                out.push(Violation {
                    rule: Rule::TopologySpread,
                    subject: Subject::Pod(pod.clone()),
                    detail: format!(
                        "zone spread (maxSkew {}, selector {}): {count} selected pods in {zone} but the eligible zones hold [{}], minimum {min}",
                        constraint.max_skew,
                        serde_json::to_string(&constraint.label_selector).unwrap_or_default(),
                        all.join(", ")
                    ),
                });
            }
        }
    }

    /// The pods the group's selector selects in its namespace, by zone: those
    /// bound to nodes the group's node selection (`filter`) allows (pods the
    /// plan moves away left out), and the group's new pods where the plan
    /// puts them.
    fn selected_per_zone(
        &self,
        group: &SpreadGroup<'_, 's>,
        filter: &[Requirements],
    ) -> BTreeMap<String, i64> {
        let (namespace, moved) = (group.namespace, group.moved);
        let selector = group.constraint.label_selector.as_ref();
        let mut counts: BTreeMap<String, i64> = BTreeMap::new();
        for (name, pods) in &self.bound {
            let Some(labels) = self.nodes.get(name).and_then(|n| n.labels()) else {
                continue;
            };
            let Some(zone) = labels.get(LABEL_TOPOLOGY_ZONE) else {
                continue;
            };
            let node_requirements = Requirements::from_labels(labels);
            if !filter
                .iter()
                .any(|r| node_requirements.is_compatible(r, &WellKnownLabels::empty()))
            {
                continue;
            }
            let n = pods
                .iter()
                .filter(|p| {
                    counts_for_topology(p)
                        && !moved.contains(&std::ptr::from_ref(**p))
                        && pod_namespace(p) == namespace
                        && selects(selector, pod_labels(p))
                })
                .count();
            *counts.entry(zone.clone()).or_insert(0) += i64::try_from(n).unwrap_or(i64::MAX);
        }
        for &m in group.members {
            if let Some(zone) = &group.placed[m].zone
                && selects(selector, pod_labels(group.placed[m].pod))
            {
                *counts.entry(zone.clone()).or_insert(0) += 1;
            }
        }
        counts
    }

    /// For each zone with new selected pods of the group, the most lenient
    /// bound among them: the highest of their minimum counts over the zones
    /// each could go to, with the pod that has it.
    fn lenient_bounds<'g>(
        &self,
        group: &SpreadGroup<'g, 's>,
        filter: &[Requirements],
        counts: &BTreeMap<String, i64>,
    ) -> BTreeMap<&'g str, (i64, &'g PodKey)> {
        let selector = group.constraint.label_selector.as_ref();
        let mut bounds: BTreeMap<&str, (i64, &PodKey)> = BTreeMap::new();
        for &m in group.members {
            let q = &group.placed[m];
            let Some(zone) = q.zone.as_deref() else {
                continue;
            };
            if !selects(selector, pod_labels(q.pod)) {
                continue;
            }
            let eligible = self.eligible_zones(q.pod, filter);
            let Some(min) = eligible
                .iter()
                .map(|z| counts.get(z).copied().unwrap_or(0))
                .min()
            else {
                continue;
            };
            let entry = bounds.entry(zone).or_insert((min, &q.key));
            if min > entry.0 {
                *entry = (min, &q.key);
            }
        }
        bounds
    }

    /// Zones a pod could surely go to (a subset of upstream's eligible domains):
    /// `V(q)` of [`validate`](super::validate)'s "Zonal spread".
    pub(super) fn eligible_zones(
        &self,
        pod: &PodInfo,
        alternatives: &[Requirements],
    ) -> BTreeSet<String> {
        let spec = spec_of(pod);
        let tolerations = spec.tolerations.as_deref().unwrap_or_default();
        let requests = resources::pod_requests(spec).unwrap_or_default();
        let mut zones = BTreeSet::new();
        let Some(strict) = alternatives.first() else {
            return zones;
        };
        for pool in self.snapshot.node_pools.iter().filter(|p| pool_usable(p)) {
            if tolerates_all(pool.spec.template.spec.taints(), tolerations).is_err() {
                continue;
            }
            let mut combined = pool_requirements(pool);
            if !combined.is_compatible(strict, self.well_known) {
                continue;
            }
            combined.add_all(strict);
            for it in self.catalog(pool.name().unwrap_or_default()) {
                if !it.intersects(&combined) || !requests.fits(&it.allocatable()) {
                    continue;
                }
                for o in it
                    .offerings
                    .iter()
                    .filter(|o| o.available && o.is_compatible(&combined))
                {
                    zones.insert(o.zone.clone());
                }
            }
        }
        zones
    }
}

/// New pods grouped by a checkable zonal spread constraint they carry, with
/// their namespace and node selection: (namespace, constraint identity, node
/// identity) to the constraint and the pods, as indices into `placed`.
type SpreadGroups = BTreeMap<(String, String, String), (TopologySpreadConstraint, Vec<usize>)>;

/// One group of [`SpreadGroups`] as its skew is checked, with the plan's
/// placements it indexes into.
struct SpreadGroup<'g, 's> {
    placed: &'g [Placed<'s>],
    /// The bound pods the plan moves away, left out of the counts.
    moved: &'g HashSet<*const PodInfo>,
    namespace: &'g str,
    constraint: &'g TopologySpreadConstraint,
    /// The group's pods, as indices into `placed`.
    members: &'g [usize],
}

/// Groups the placed pods by the zonal spread constraints the check can
/// judge: on the zone key, `DoNotSchedule`, with a selector, no
/// `matchLabelKeys`, and the default node affinity and taint policies.
fn spread_groups(placed: &[Placed<'_>]) -> SpreadGroups {
    let mut groups = SpreadGroups::new();
    for (i, p) in placed.iter().enumerate() {
        let spec = spec_of(p.pod);
        for c in spec.topology_spread_constraints.iter().flatten() {
            let checkable = normalize_label_key(&c.topology_key) == LABEL_TOPOLOGY_ZONE
                && c.when_unsatisfiable == "DoNotSchedule"
                && c.label_selector.is_some()
                && c.match_label_keys.as_ref().is_none_or(Vec::is_empty)
                && c.node_affinity_policy
                    .as_deref()
                    .is_none_or(|p| p == "Honor")
                && c.node_taints_policy
                    .as_deref()
                    .is_none_or(|p| p == "Ignore");
            if !checkable {
                continue;
            }
            let key = (
                pod_namespace(p.pod).to_string(),
                constraint_identity(c),
                node_identity(spec),
            );
            groups
                .entry(key)
                .or_insert_with(|| (c.clone(), Vec::new()))
                .1
                .push(i);
        }
    }
    groups
}

/// A spread constraint, as a group identity.
pub(super) fn constraint_identity(c: &TopologySpreadConstraint) -> String {
    serde_json::to_string(c).unwrap_or_default()
}

/// A pod's `nodeSelector` and required node affinity, as a group identity.
pub(super) fn node_identity(spec: &PodSpec) -> String {
    let required = spec
        .affinity
        .as_ref()
        .and_then(|a| a.node_affinity.as_ref())
        .and_then(|n| {
            n.required_during_scheduling_ignored_during_execution
                .as_ref()
        });
    format!(
        "{}|{}",
        serde_json::to_string(&spec.node_selector).unwrap_or_default(),
        serde_json::to_string(&required).unwrap_or_default()
    )
}
