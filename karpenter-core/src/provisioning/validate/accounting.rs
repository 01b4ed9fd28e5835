//! Accounting: every pending pod, and every reschedulable pod of a node on its
//! way out, appears exactly once in the plan, and nothing else does; a pod
//! with Dynamic Resource Allocation claims is not placed.

use std::collections::{BTreeMap, BTreeSet};

use super::index::{Checker, Host, Placed};
use super::pods::spec_of;
use super::violation::{Rule, Subject, Violation};
use crate::pods::PodKey;
use crate::pods::has_dra_requirements;
use crate::provisioning::plan::ProvisioningPlan;
use crate::scheduling::LABEL_TOPOLOGY_ZONE;

/// Where the plan lists each pod key, named as the violations name the places
/// ("claim #3", "node \"a\"", "unschedulable"), in plan order.
type Places<'p> = BTreeMap<&'p PodKey, Vec<String>>;

impl<'s> Checker<'s> {
    /// Every pending pod exactly once, nothing else; returns the placed pods.
    pub(super) fn check_accounting(
        &self,
        plan: &ProvisioningPlan,
        out: &mut Vec<Violation>,
    ) -> Vec<Placed<'s>> {
        let (seen, placed) = self.listings(plan, out);
        self.check_expected_once(&seen, out);
        check_no_dra_pod_placed(&placed, out);
        self.check_optional_at_most_once(&seen, out);
        self.check_no_unknown_pod(&seen, out);
        placed
    }

    /// Walks the plan's claims, existing nodes and unschedulable list: where
    /// each pod is listed, and the pending pods placed (each at its first
    /// placement). Flags an unschedulable entry without a reason
    /// ([`Rule::MissingReason`]) on the way.
    fn listings<'p>(
        &self,
        plan: &'p ProvisioningPlan,
        out: &mut Vec<Violation>,
    ) -> (Places<'p>, Vec<Placed<'s>>) {
        let mut seen: BTreeMap<&PodKey, Vec<String>> = BTreeMap::new();
        let mut placed = Vec::new();
        let mut first: BTreeSet<&PodKey> = BTreeSet::new();
        for (index, claim) in plan.node_claims.iter().enumerate() {
            for key in &claim.pods {
                seen.entry(key).or_default().push(format!("claim #{index}"));
                if let Some(pod) = self.pending.get(key)
                    && first.insert(key)
                {
                    let zone = claim.launch.as_ref().map(|l| l.zone.clone());
                    placed.push(Placed {
                        pod,
                        key: key.clone(),
                        host: Host::Claim(index),
                        zone,
                    });
                }
            }
        }
        for placement in &plan.existing_nodes {
            let zone = self
                .nodes
                .get(placement.name.as_str())
                .and_then(|n| n.labels())
                .and_then(|l| l.get(LABEL_TOPOLOGY_ZONE))
                .cloned();
            for key in &placement.pods {
                seen.entry(key)
                    .or_default()
                    .push(format!("node {:?}", placement.name));
                if let Some(pod) = self.pending.get(key)
                    && first.insert(key)
                {
                    placed.push(Placed {
                        pod,
                        key: key.clone(),
                        host: Host::Node(placement.name.clone()),
                        zone: zone.clone(),
                    });
                }
            }
        }
        for entry in &plan.unschedulable {
            seen.entry(&entry.pod)
                .or_default()
                .push("unschedulable".to_string());
            if entry.reason.trim().is_empty() {
                out.push(Violation {
                    rule: Rule::MissingReason,
                    subject: Subject::Pod(entry.pod.clone()),
                    detail: "the reason is empty".to_string(),
                });
            }
        }
        (seen, placed)
    }

    /// [`Rule::PodMissing`] and [`Rule::PodDuplicated`]: each pod the plan
    /// must list is listed, and no more times than there are pods of its key.
    fn check_expected_once(&self, seen: &Places<'_>, out: &mut Vec<Violation>) {
        for (key, &count) in &self.expected {
            let places = seen.get(key).map_or(&[][..], |v| &v[..]);
            if places.is_empty() {
                out.push(Violation {
                    rule: Rule::PodMissing,
                    subject: Subject::Pod(key.clone()),
                    detail: "in no claim, on no node and not unschedulable".to_string(),
                });
            } else if places.len() > count {
                out.push(Violation {
                    rule: Rule::PodDuplicated,
                    subject: Subject::Pod(key.clone()),
                    detail: format!("{} times: {}", places.len(), places.join(", ")),
                });
            }
        }
    }

    /// [`Rule::PodDuplicated`] for the pods the plan may leave out: listed at
    /// most once.
    fn check_optional_at_most_once(&self, seen: &Places<'_>, out: &mut Vec<Violation>) {
        for key in &self.optional {
            let places = seen.get(key).map_or(&[][..], |v| &v[..]);
            if places.len() > 1 {
                out.push(Violation {
                    rule: Rule::PodDuplicated,
                    subject: Subject::Pod(key.clone()),
                    detail: format!("{} times: {}", places.len(), places.join(", ")),
                });
            }
        }
    }

    /// [`Rule::UnknownPod`]: the plan lists no pod it was not given.
    fn check_no_unknown_pod(&self, seen: &Places<'_>, out: &mut Vec<Violation>) {
        for (key, places) in seen {
            if !self.expected.contains_key(*key) && !self.optional.contains(*key) {
                out.push(Violation {
                    rule: Rule::UnknownPod,
                    subject: Subject::Pod((*key).clone()),
                    detail: format!(
                        "listed in {} but no pending pod, nor a pod of a node on its way \
                         out, has this name",
                        places.join(", ")
                    ),
                });
            }
        }
    }
}

/// [`Rule::DraPodPlaced`]: no placed pod has Dynamic Resource Allocation
/// claims.
fn check_no_dra_pod_placed(placed: &[Placed<'_>], out: &mut Vec<Violation>) {
    for placed in placed {
        if has_dra_requirements(spec_of(placed.pod)) {
            let host = match &placed.host {
                Host::Claim(index) => format!("claim #{index}"),
                Host::Node(name) => format!("node {name:?}"),
            };
            out.push(Violation {
                rule: Rule::DraPodPlaced,
                subject: Subject::Pod(placed.key.clone()),
                detail: format!("placed on {host}, but it has Dynamic Resource Allocation claims"),
            });
        }
    }
}
