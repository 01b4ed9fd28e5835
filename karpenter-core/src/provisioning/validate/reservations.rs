//! Capacity reservations: no reservation held by more new claims than it can
//! start, and a claim launching into one pinned to it.
//!
//! A claim holds every reservation whose id its requirements allow on the
//! reservation's label (the scheduler's pessimistic hold, as upstream's
//! reservation manager), and the one its launch takes. Static NodePools'
//! claims take no part: upstream's static provisioning launches without the
//! reservation manager.

use std::collections::{BTreeMap, BTreeSet};

use super::index::Checker;
use super::statics::is_static;
use super::violation::{Rule, Subject, Violation};
use crate::provisioning::plan::{PlannedClaim, ProvisioningPlan};
use crate::scheduling::{CAPACITY_TYPE_LABEL_KEY, CAPACITY_TYPE_RESERVED};

/// A reservation as the catalogs offer it: its label, and the least capacity
/// any offering of it says.
struct Offered<'s> {
    label: &'s str,
    capacity: u32,
}

impl Checker<'_> {
    /// Flags each reservation held by more claims than its capacity, and each
    /// claim launching into a reservation without being pinned to it.
    pub(super) fn check_reservations(&self, plan: &ProvisioningPlan, out: &mut Vec<Violation>) {
        let mut offered: BTreeMap<&str, Offered<'_>> = BTreeMap::new();
        let reservations = self
            .snapshot
            .instance_types
            .values()
            .flat_map(|types| types.iter())
            .flat_map(|t| &t.offerings)
            .filter_map(|o| o.reservation.as_ref());
        for r in reservations {
            offered
                .entry(&r.id)
                .and_modify(|o| o.capacity = o.capacity.min(r.capacity))
                .or_insert(Offered {
                    label: &r.label,
                    capacity: r.capacity,
                });
        }
        if offered.is_empty() {
            return;
        }
        let mut holders: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
        for (index, claim) in plan.node_claims.iter().enumerate() {
            if is_static(self.pool(&claim.node_pool)) {
                continue;
            }
            for id in held(claim, &offered) {
                holders.entry(id).or_default().push(index);
            }
            if let Some(detail) = unpinned(claim, &offered) {
                out.push(Violation {
                    rule: Rule::ReservedCapacity,
                    subject: Subject::Claim {
                        index,
                        node_pool: claim.node_pool.clone(),
                    },
                    detail,
                });
            }
        }
        for (id, claims) in holders {
            let capacity = offered[id].capacity;
            if claims.len() > capacity as usize {
                out.push(Violation {
                    rule: Rule::ReservedCapacity,
                    subject: Subject::Plan,
                    detail: format!(
                        "reservation {id} can start {capacity} more instance(s), but {} new \
                         claims hold it (claims {claims:?})",
                        claims.len()
                    ),
                });
            }
        }
    }
}

/// The reservations the claim holds: those its requirements allow on their
/// label, and the one it launches into.
fn held<'p>(claim: &'p PlannedClaim, offered: &BTreeMap<&str, Offered<'_>>) -> BTreeSet<&'p str> {
    let mut held: BTreeSet<&str> = claim
        .requirements
        .iter()
        .filter(|r| r.operator == "In")
        .flat_map(|r| {
            r.values
                .iter()
                .filter(|id| offered.get(id).is_some_and(|o| o.label == r.key))
        })
        .collect();
    if let Some(id) = claim
        .launch
        .as_ref()
        .and_then(|l| l.reservation_id.as_deref())
    {
        held.insert(id);
    }
    held
}

/// Why a claim launching into a reservation is not pinned to it: its
/// capacity type must be `reserved` alone and the reservation's label must
/// allow its id, so that the cloud launches into what the plan counted.
fn unpinned(claim: &PlannedClaim, offered: &BTreeMap<&str, Offered<'_>>) -> Option<String> {
    let id = claim.launch.as_ref()?.reservation_id.as_deref()?;
    let requirement = |key: &str| claim.requirements.iter().find(|r| r.key == key);
    let reserved_only = requirement(CAPACITY_TYPE_LABEL_KEY)
        .is_some_and(|r| r.operator == "In" && r.values.iter().eq([CAPACITY_TYPE_RESERVED]));
    let label = offered.get(id).map(|o| o.label)?;
    let allows_id =
        requirement(label).is_some_and(|r| r.operator == "In" && r.values.iter().any(|v| v == id));
    (!reserved_only || !allows_id).then(|| {
        format!(
            "launches into reservation {id} but is not pinned to it (capacity type reserved \
             alone, {label} In [{id}, ...])"
        )
    })
}
