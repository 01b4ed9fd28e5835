//! Existing nodes (and in-flight claims): the node can take the pods, has room
//! for them, and each pod tolerates its taints and meets its requirements.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::Taint;

use super::describe::describe_taint;
use super::index::Checker;
use super::pods::{first_untolerated, spec_of, strict_alternatives};
use super::violation::{Rule, Subject, Violation};
use crate::pods::PodKey;
use crate::provisioning::plan::ProvisioningPlan;
use crate::resources::{self, ResourceList};
use crate::scheduling::{
    DISRUPTED_TAINT_KEY, LABEL_HOSTNAME, Requirements, WellKnownLabels, uninitialized_node_taints,
};
use crate::snapshot::ClusterNode;

/// An existing node as the pods placed on it are checked: its labels read as
/// requirements (with its hostname), and the taints its pods must tolerate.
struct Destination<'n> {
    name: &'n str,
    requirements: Requirements,
    taints: Vec<Taint>,
}

impl Destination<'_> {
    /// The node `name` as its new pods see it, `taints` being the node's. A
    /// managed node not yet initialised keeps only the taints that are not
    /// startup or uninitialised-node taints: those go away before pods run.
    fn of<'n>(name: &'n str, node: &ClusterNode, taints: Vec<Taint>) -> Destination<'n> {
        let mut labels = node.labels().cloned().unwrap_or_default();
        labels
            .entry(LABEL_HOSTNAME.to_string())
            .or_insert_with(|| name.to_string());
        let requirements = Requirements::from_labels(&labels);
        let taints: Vec<Taint> = if node.is_managed() && !node.is_initialized() {
            let startup = node
                .node_claim
                .as_ref()
                .map(|c| c.spec.startup_taints().to_vec())
                .unwrap_or_default();
            uninitialized_node_taints(&taints, &startup)
                .cloned()
                .collect()
        } else {
            taints
        };
        Destination {
            name,
            requirements,
            taints,
        }
    }
}

impl Checker<'_> {
    /// Each existing node the plan places pods or CapacityBuffer chunks on,
    /// in name order.
    pub(super) fn check_existing(&self, plan: &ProvisioningPlan, out: &mut Vec<Violation>) {
        let chunks = self.chunks_by_node(plan);
        let mut placed = placed_by_node(plan);
        for name in chunks.keys() {
            placed.entry(name.as_str()).or_default();
        }
        for (name, keys) in placed {
            self.check_existing_node(name, &keys, chunks.get(name), out);
        }
    }

    /// One existing node: it exists ([`Rule::UnknownNode`]), may take pods
    /// ([`Rule::NotADestination`]), each pod placed there may run on it, and
    /// it has room for them and its `chunks` ([`Rule::OverCommitted`]).
    fn check_existing_node(
        &self,
        name: &str,
        keys: &[&PodKey],
        chunks: Option<&ResourceList>,
        out: &mut Vec<Violation>,
    ) {
        let subject = Subject::Node(name.to_string());
        let Some(node) = self.nodes.get(name) else {
            out.push(Violation {
                rule: Rule::UnknownNode,
                subject,
                detail: format!("{} pod(s) placed on it", keys.len()),
            });
            return;
        };
        let taints = node.taints();
        if node.is_deleting() || taints.iter().any(|t| t.key == DISRUPTED_TAINT_KEY) {
            out.push(Violation {
                rule: Rule::NotADestination,
                subject: subject.clone(),
                detail: "it is being deleted or disrupted".to_string(),
            });
        }
        let mut used = ResourceList::new();
        for pod in self.running_on(name) {
            if let Ok(r) = resources::pod_requests(spec_of(pod)) {
                used += &r;
            }
        }
        // The buffer chunks placed there count as added pods.
        let mut added = chunks.cloned().unwrap_or_default();
        let destination = Destination::of(name, node, taints);
        for key in keys {
            self.check_pod_on_existing_node(&destination, key, &mut added, out);
        }
        check_room(subject, &node.allocatable(), &used, &added, out);
    }

    /// One pod placed on an existing node, reported about the pod: its
    /// requests read ([`Rule::UnreadablePod`]; they are added to `added`),
    /// it tolerates the node's taints ([`Rule::Taint`]) and the node's labels
    /// meet one of its node selector alternatives ([`Rule::NodeRequirements`]).
    /// A pod that is not pending is left to accounting.
    fn check_pod_on_existing_node(
        &self,
        destination: &Destination<'_>,
        key: &PodKey,
        added: &mut ResourceList,
        out: &mut Vec<Violation>,
    ) {
        let name = destination.name;
        let node_requirements = &destination.requirements;
        let Some(pod) = self.pending.get(key) else {
            return;
        };
        let spec = spec_of(pod);
        match resources::pod_requests(spec) {
            Ok(r) => *added += &r,
            Err(e) => out.push(Violation {
                rule: Rule::UnreadablePod,
                subject: Subject::Pod(key.clone()),
                detail: e.to_string(),
            }),
        }
        let tolerations = spec.tolerations.as_deref().unwrap_or_default();
        if let Some(taint) = first_untolerated(&destination.taints, tolerations) {
            out.push(Violation {
                rule: Rule::Taint,
                subject: Subject::Pod(key.clone()),
                detail: format!(
                    "on node {name:?}: does not tolerate {}",
                    describe_taint(taint)
                ),
            });
        }
        match strict_alternatives(spec) {
            Ok(alternatives) => {
                if !alternatives
                    .iter()
                    .any(|r| node_requirements.is_compatible(r, &WellKnownLabels::empty()))
                {
                    let why = alternatives
                        .first()
                        .and_then(|r| {
                            node_requirements
                                .compatible(r, &WellKnownLabels::empty())
                                .err()
                        })
                        .map(|e| e.to_string())
                        .unwrap_or_default();
                    out.push(Violation {
                        rule: Rule::NodeRequirements,
                        subject: Subject::Pod(key.clone()),
                        detail: format!(
                            "on node {name:?}: its labels meet no node selector alternative ({why})"
                        ),
                    });
                }
            }
            Err(e) => out.push(Violation {
                rule: Rule::UnreadablePod,
                subject: Subject::Pod(key.clone()),
                detail: e.to_string(),
            }),
        }
    }
}

/// [`Rule::OverCommitted`] for an existing node: what runs there and what the
/// plan adds fit its allocatable, every resource short named with its figures.
fn check_room(
    subject: Subject,
    allocatable: &ResourceList,
    used: &ResourceList,
    added: &ResourceList,
    out: &mut Vec<Violation>,
) {
    let left = allocatable.saturating_sub(used).saturating_sub(added);
    let negative: Vec<String> = left
        .iter()
        .filter(|&(_, milli)| milli < 0)
        .map(|(resource, _)| {
            format!(
                "{resource}: allocatable {} − running {} − added {}",
                resources::format_milli(resource, allocatable.get(resource)),
                resources::format_milli(resource, used.get(resource)),
                resources::format_milli(resource, added.get(resource))
            )
        })
        .collect();
    if !negative.is_empty() {
        out.push(Violation {
            rule: Rule::OverCommitted,
            subject,
            detail: negative.join("; "),
        });
    }
}

/// The pods the plan places on each existing node, by the node's name (a
/// node listed twice takes both lists).
pub(super) fn placed_by_node(plan: &ProvisioningPlan) -> BTreeMap<&str, Vec<&PodKey>> {
    let mut by_node: BTreeMap<&str, Vec<&PodKey>> = BTreeMap::new();
    for placement in &plan.existing_nodes {
        by_node
            .entry(placement.name.as_str())
            .or_default()
            .extend(&placement.pods);
    }
    by_node
}
