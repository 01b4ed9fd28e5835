//! NodePool limits: a pool's existing capacity plus its new claims' stays within
//! its limits.

use std::collections::BTreeMap;

use super::index::Checker;
use super::violation::{Rule, Subject, Violation};
use crate::provisioning::plan::ProvisioningPlan;
use crate::resources::{self, ResourceList};
use crate::snapshot::NODES_RESOURCE;

impl Checker<'_> {
    /// NodePool limits: existing capacity plus the launches stays within them.
    pub(super) fn check_limits(&self, plan: &ProvisioningPlan, out: &mut Vec<Violation>) {
        let mut planned: BTreeMap<&str, (usize, ResourceList)> = BTreeMap::new();
        for claim in &plan.node_claims {
            // A static pool answers to its `nodes` limit alone (statics.rs).
            if super::statics::is_static(self.pool(&claim.node_pool)) {
                continue;
            }
            let Some(launch) = &claim.launch else {
                continue;
            };
            let Some(it) = self.instance_type(&claim.node_pool, &launch.instance_type) else {
                continue;
            };
            let entry = planned.entry(claim.node_pool.as_str()).or_default();
            entry.0 += 1;
            entry.1 += &it.capacity;
            let nodes = entry.1.get(NODES_RESOURCE);
            entry.1.set(NODES_RESOURCE, nodes.saturating_add(1000));
        }
        for (name, (claims, added)) in planned {
            let Some(pool) = self.pool(name) else {
                continue;
            };
            let Some(limits) = pool.spec.limits.as_ref() else {
                continue;
            };
            let Ok(limit) = ResourceList::from_quantities(limits.as_map()) else {
                continue;
            };
            let mut existing = ResourceList::new();
            for node in self
                .snapshot
                .nodes
                .iter()
                // Nodes on their way out count against no limit.
                .filter(|n| n.node_pool() == Some(name) && !n.is_marked_for_deletion())
            {
                existing += &node.capacity();
            }
            for resource in limits.as_map().keys() {
                let (have, add, max) = (
                    existing.get(resource),
                    added.get(resource),
                    limit.get(resource),
                );
                if add > 0 && have.saturating_add(add) > max {
                    out.push(Violation {
                        rule: Rule::NodePoolLimits,
                        subject: Subject::NodePool(name.to_string()),
                        detail: format!(
                            "{resource}: existing nodes {} + {claims} new claim(s) {} exceed the limit {}",
                            resources::format_milli(resource, have),
                            resources::format_milli(resource, add),
                            resources::format_milli(resource, max)
                        ),
                    });
                }
            }
        }
    }
}
