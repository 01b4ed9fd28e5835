//! Static NodePools: their claims (no pods, launched as the cheapest offering
//! their template allows) and their counts (held at `replicas` within the
//! `nodes` limit, the surplus removed from their active claims).

use std::collections::{BTreeMap, BTreeSet};

use super::index::Checker;
use super::violation::{Rule, Subject, Violation};
use crate::api::{NodePool, condition_types};
use crate::cloudprovider::OfferingFilter;
use crate::provisioning::plan::{PlannedClaim, ProvisioningPlan, read_requirements};
use crate::provisioning::static_pools::{claim_name, node_limit, static_claim};

/// How far a launch price may be from the catalog's.
const PRICE_TOLERANCE: f64 = 1e-9;

/// Whether `pool` holds a fixed number of nodes.
pub(super) fn is_static(pool: Option<&NodePool>) -> bool {
    pool.is_some_and(|p| p.spec.is_static())
}

impl Checker<'_> {
    /// The checks of static pools' claims, removals and counts.
    pub(super) fn check_static(&self, plan: &ProvisioningPlan, out: &mut Vec<Violation>) {
        for (index, claim) in plan.node_claims.iter().enumerate() {
            if is_static(self.pool(&claim.node_pool)) {
                self.check_static_claim(index, claim, out);
            }
        }
        // Each static pool's active claims, by name, read once.
        let mut active: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
        for node in &self.snapshot.nodes {
            let pool = node.node_pool().filter(|p| is_static(self.pool(p)));
            if let Some(pool) = pool
                && node.node_claim.is_some()
                && !node.is_marked_for_deletion()
            {
                active.entry(pool).or_default().insert(claim_name(node));
            }
        }
        let mut removed = BTreeSet::new();
        for removal in &plan.static_removals {
            let mut flag = |detail: String| {
                out.push(Violation {
                    rule: Rule::StaticRemoval,
                    subject: Subject::Plan,
                    detail: format!("NodeClaim {}: {detail}", removal.node_claim),
                })
            };
            if !removed.insert(removal.node_claim.as_str()) {
                flag("removed twice".to_string());
            }
            let of_pool = active.get(removal.node_pool.as_str());
            if !of_pool.is_some_and(|names| names.contains(removal.node_claim.as_str())) {
                flag(format!(
                    "not an active claim of static NodePool {}",
                    removal.node_pool
                ));
            }
        }
        for pool in self
            .snapshot
            .node_pools
            .iter()
            .filter(|p| p.spec.is_static())
        {
            self.check_replicas(pool, plan, out);
        }
    }

    fn check_static_claim(&self, index: usize, claim: &PlannedClaim, out: &mut Vec<Violation>) {
        let mut flag = |detail: String| {
            out.push(Violation {
                rule: Rule::StaticClaim,
                subject: Subject::Claim {
                    index,
                    node_pool: claim.node_pool.clone(),
                },
                detail,
            })
        };
        if !claim.pods.is_empty() {
            flag(format!("holds {} pods", claim.pods.len()));
        }
        let Some(launch) = &claim.launch else {
            flag("has no launch".to_string());
            return;
        };
        let Ok(requirements) = read_requirements(&claim.requirements) else {
            flag("its requirements cannot be read".to_string());
            return;
        };
        let filter = OfferingFilter::new(&requirements);
        let allowed = self
            .catalog(&claim.node_pool)
            .iter()
            .filter(|t| t.intersects(&requirements))
            .flat_map(|t| t.offerings.iter().map(move |o| (t, o)))
            .filter(|(_, o)| filter.admits_available(o));
        let mut cheapest = f64::INFINITY;
        let mut launched = None;
        for (t, o) in allowed {
            cheapest = cheapest.min(o.price);
            if t.name == launch.instance_type && launch.is_of(o) {
                launched = Some(o.price);
            }
        }
        match launched {
            None => flag(format!(
                "launches {}/{}/{}, not an available offering its requirements allow",
                launch.instance_type, launch.zone, launch.capacity_type
            )),
            Some(price) if (price - launch.price).abs() > PRICE_TOLERANCE => flag(format!(
                "launch price {} is not the catalog's {price}",
                launch.price
            )),
            Some(price) if price > cheapest + PRICE_TOLERANCE => flag(format!(
                "launches at {price} where its requirements allow {cheapest}"
            )),
            Some(_) => {}
        }
    }

    fn check_replicas(&self, pool: &NodePool, plan: &ProvisioningPlan, out: &mut Vec<Violation>) {
        let name = pool.name().unwrap_or_default();
        let replicas = pool.spec.replicas.unwrap_or(0).max(0);
        // Active, and on their way out: deleting, or taken by a command.
        let (mut active, mut others, mut taken) = (0i64, 0i64, 0i64);
        let claims = (self.snapshot.nodes.iter())
            .filter(|n| n.node_claim.is_some() && n.node_pool() == Some(name));
        for node in claims {
            if !node.is_marked_for_deletion() {
                active += 1;
            } else {
                others += 1;
                taken += i64::from(!node.is_deleting());
            }
        }
        let launched = plan
            .node_claims
            .iter()
            .filter(|c| c.node_pool == name)
            .count() as i64;
        let removed = (plan.static_removals.iter())
            .filter(|r| r.node_pool == name)
            .count() as i64;
        let deleting = pool.metadata.deletion_timestamp.is_some();
        let ready = pool
            .condition(condition_types::READY)
            .is_none_or(|c| c.is_true());
        let room = node_limit(pool).map_or(i64::MAX, |limit| limit - active - others);
        let (launches, removals) = if deleting {
            (0, 0)
        } else if active > replicas {
            (0, active - replicas)
        } else if active + taken >= replicas || !ready {
            (0, 0)
        } else {
            ((replicas - active).min(room).max(0), 0)
        };
        // A pool whose template allows no available offering launches none.
        let launches_ok =
            launched == launches || (launched == 0 && static_claim(self.snapshot, pool).is_none());
        if !launches_ok || removed != removals {
            out.push(Violation {
                rule: Rule::StaticReplicas,
                subject: Subject::Plan,
                detail: format!(
                    "static NodePool {name} (replicas {replicas}, {active} active, {taken} taken): \
                     {launched} launched and {removed} removed where {launches} and {removals} hold it"
                ),
            });
        }
    }
}
