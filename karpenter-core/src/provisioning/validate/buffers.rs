//! CapacityBuffer chunks in a plan: the counts add up, and the room the
//! chunks take is room the claims and nodes have (the over-commitment checks
//! of `claims.rs` and `existing.rs` add the chunks' requests).

use std::collections::BTreeMap;

use super::index::Checker;
use super::violation::{Rule, Subject, Violation};
use crate::provisioning::plan::ProvisioningPlan;
use crate::resources::{self, ResourceList};

impl Checker<'_> {
    /// What one chunk of the buffer `key` (`namespace/name`) requests, if
    /// the snapshot has such a buffer with virtual pods.
    pub(super) fn chunk_requests(&self, key: &str) -> Option<ResourceList> {
        let buffers = &self.snapshot.capacity_buffers;
        let index = buffers.states().iter().position(|s| s.key == key)?;
        let (pod, _) = buffers.virtual_pods().find(|(_, b)| *b as usize == index)?;
        resources::pod_requests(pod.spec.as_deref()?).ok()
    }

    /// The requests of the chunks the plan puts on each existing node.
    pub(super) fn chunks_by_node(&self, plan: &ProvisioningPlan) -> BTreeMap<String, ResourceList> {
        let mut by_node: BTreeMap<String, ResourceList> = BTreeMap::new();
        for buffer in &plan.capacity_buffers {
            let Some(chunk) = self.chunk_requests(&buffer.buffer) else {
                continue;
            };
            for (node, &count) in &buffer.existing_nodes {
                let entry = by_node.entry(node.clone()).or_default();
                for _ in 0..count {
                    *entry += &chunk;
                }
            }
        }
        by_node
    }

    /// Every buffer of the snapshot has an entry when any has; a resolved
    /// buffer's chunks are all somewhere (existing nodes, new claims,
    /// unschedulable) exactly once; the claims hold as many as the entry
    /// says; claims and entries name only the snapshot's buffers.
    pub(super) fn check_buffers(&self, plan: &ProvisioningPlan, out: &mut Vec<Violation>) {
        let states = self.snapshot.capacity_buffers.states();
        let mut on_claims: BTreeMap<&str, u32> = BTreeMap::new();
        for (index, claim) in plan.node_claims.iter().enumerate() {
            for (key, &count) in &claim.capacity_buffers {
                if !states.iter().any(|s| s.key == *key) {
                    out.push(Violation {
                        rule: Rule::CapacityBuffer,
                        subject: Subject::Claim {
                            index,
                            node_pool: claim.node_pool.clone(),
                        },
                        detail: format!("holds chunks of {key}, which is no buffer of the cluster"),
                    });
                }
                *on_claims.entry(key.as_str()).or_default() += count;
            }
        }
        if plan.capacity_buffers.is_empty() && on_claims.is_empty() {
            return;
        }
        for state in states {
            let Some(entry) = plan.capacity_buffers.iter().find(|b| b.buffer == state.key) else {
                out.push(Violation {
                    rule: Rule::CapacityBuffer,
                    subject: Subject::Plan,
                    detail: format!("buffer {} is not accounted for", state.key),
                });
                continue;
            };
            let flag = |detail: String| Violation {
                rule: Rule::CapacityBuffer,
                subject: Subject::Plan,
                detail: format!("buffer {}: {detail}", state.key),
            };
            let wanted = if state.is_ready_for_provisioning() {
                state.replicas
            } else {
                0
            };
            let existing: u32 = entry.existing_nodes.values().sum();
            let placed = existing + entry.new_claims + entry.unschedulable;
            if entry.replicas != state.replicas || placed != wanted {
                out.push(flag(format!(
                    "{} chunks wanted, the plan says {} and places {placed}",
                    wanted, entry.replicas
                )));
            }
            let held = on_claims.get(state.key.as_str()).copied().unwrap_or(0);
            if held != entry.new_claims {
                out.push(flag(format!(
                    "{} chunks on new claims, but the claims hold {held}",
                    entry.new_claims
                )));
            }
            for node in entry.existing_nodes.keys() {
                if !self.nodes.contains_key(node.as_str()) {
                    out.push(flag(format!(
                        "chunks on {node:?}, which is no node of the cluster"
                    )));
                }
            }
        }
        for entry in &plan.capacity_buffers {
            if !states.iter().any(|s| s.key == entry.buffer) {
                out.push(Violation {
                    rule: Rule::CapacityBuffer,
                    subject: Subject::Plan,
                    detail: format!("{} is no buffer of the cluster", entry.buffer),
                });
            }
        }
    }
}
