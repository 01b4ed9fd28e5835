//! Accounting: every pending pod, and every reschedulable pod of a node on its
//! way out, appears exactly once in the plan, and nothing else does; a pod
//! with Dynamic Resource Allocation claims is not placed.

use std::collections::{BTreeMap, BTreeSet};

use super::index::{Checker, Host, Placed};
use super::pods::spec_of;
use super::violation::{Rule, Subject, Violation};
use crate::pods::PodKey;
use crate::provisioning::demand::dra::has_dra_requirements;
use crate::provisioning::plan::ProvisioningPlan;
use crate::scheduling::LABEL_TOPOLOGY_ZONE;

impl<'s> Checker<'s> {
    /// Every pending pod exactly once, nothing else; returns the placed pods.
    pub(super) fn check_accounting(
        &self,
        plan: &ProvisioningPlan,
        out: &mut Vec<Violation>,
    ) -> Vec<Placed<'s>> {
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
        for placed in &placed {
            if has_dra_requirements(spec_of(placed.pod)) {
                let host = match &placed.host {
                    Host::Claim(index) => format!("claim #{index}"),
                    Host::Node(name) => format!("node {name:?}"),
                };
                out.push(Violation {
                    rule: Rule::DraPodPlaced,
                    subject: Subject::Pod(placed.key.clone()),
                    detail: format!(
                        "placed on {host}, but it has Dynamic Resource Allocation claims"
                    ),
                });
            }
        }
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
        for (key, places) in &seen {
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
        placed
    }
}
