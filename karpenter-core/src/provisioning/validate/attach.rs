//! Volume attach limits: the pods a plan adds to an existing node attach no
//! more claims of a CSI driver than its CSINode allows, with those of the
//! pods already bound there (a claim counting once per node).

use super::existing::placed_by_node;
use super::index::Checker;
use super::violation::{Rule, Subject, Violation};
use crate::provisioning::demand::attach::{self, Attached};
use crate::provisioning::plan::ProvisioningPlan;

impl Checker<'_> {
    /// Flags each existing node whose placed pods break an attach limit.
    pub(super) fn check_attach_limits(&self, plan: &ProvisioningPlan, out: &mut Vec<Violation>) {
        if self.snapshot.csi_nodes.is_empty() {
            return;
        }
        for (name, keys) in placed_by_node(plan) {
            // Only a Node has limits (a claim in flight has none yet).
            let has_node = self.nodes.get(name).is_some_and(|n| n.node.is_some());
            let limits = attach::limits(&self.snapshot.csi_nodes, name);
            if !has_node || limits.is_empty() {
                continue;
            }
            let mut on_node = Attached::new();
            for pod in self.running_on(name) {
                attach::attach(&mut on_node, &attach::attached(self.snapshot, pod));
            }
            let mut added = Attached::new();
            for key in keys {
                if let Some(pod) = self.pending.get(key) {
                    attach::attach(&mut added, &attach::attached(self.snapshot, *pod));
                }
            }
            if attach::exceeds(&limits, &on_node, &added) {
                let counts: Vec<String> = limits
                    .iter()
                    .map(|(driver, limit)| {
                        let mut all = on_node.get(driver).cloned().unwrap_or_default();
                        all.extend(added.get(driver).into_iter().flatten().cloned());
                        format!("{driver}: {} of {limit}", all.len())
                    })
                    .collect();
                out.push(Violation {
                    rule: Rule::VolumeAttachLimit,
                    subject: Subject::Node(name.to_string()),
                    detail: format!(
                        "volumes attached over its CSINode's limits ({})",
                        counts.join(", ")
                    ),
                });
            }
        }
    }
}
