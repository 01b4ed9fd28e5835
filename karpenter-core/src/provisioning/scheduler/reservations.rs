//! Capacity reservations as one simulation takes them, as upstream's
//! `ReservationManager` and `NodeClaim.offeringsToReserve` do.
//!
//! A reserved offering launches into a reservation that can start only so
//! many more instances. A new claim does not know yet which of its instance
//! types and offerings the cloud will launch, so it holds, pessimistically,
//! one unit of *every* reservation among its types' compatible available
//! reserved offerings that still has a unit left (or that it holds already).
//! Each pod it takes narrows its types and requirements, and the claim gives
//! back the reservations it can no longer use. A finalized claim holding
//! reservations is pinned to them: capacity type `reserved` and the
//! reservation ids on their label, so that a launch never takes more than a
//! reservation has.
//!
//! Provisioning is strict (upstream's `DisableReservedCapacityFallback`): a
//! claim that could use a reservation but finds none left refuses the pod,
//! which neither falls back to a lighter NodePool nor has its preferences
//! relaxed, and waits for a later plan. Disruption's simulations fall back:
//! the claim takes the pod without a reservation.

use std::sync::Arc;

use crate::cloudprovider::{InstanceType, OfferingFilter};
use crate::fast_hash::HashMap;
use crate::provisioning::instance_types::templates::Template;
use crate::provisioning::instance_types::type_cache::TypeSet;
use crate::scheduling::{
    CAPACITY_TYPE_LABEL_KEY, CAPACITY_TYPE_RESERVED, Requirement, Requirements,
};

/// What a claim does when it could use a reservation but cannot have one
/// (upstream's `ReservedOfferingMode`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ReservedMode {
    /// The claim refuses the pod (provisioning).
    Strict,
    /// The claim takes the pod without a reservation (disruption's
    /// simulations).
    Fallback,
}

/// Why a claim refuses a pod over reservations (strict mode only).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ReservedRefusal {
    /// Compatible reserved offerings exist, but every one's reservation is
    /// taken by other claims.
    NoneLeft,
    /// The pod would narrow the claim off every reservation it holds.
    WouldLoseAll,
}

impl std::fmt::Display for ReservedRefusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            ReservedRefusal::NoneLeft => {
                "one or more instance types with compatible reserved offerings are available, \
                 but could not be reserved"
            }
            ReservedRefusal::WouldLoseAll => {
                "satisfying updated nodeclaim constraints would remove all compatible reserved \
                 offering options"
            }
        })
    }
}

/// Every reservation the snapshot's pools offer, each with the label that
/// names it and how many instances it can start: the least any offering of
/// it says (pools may read the same reservation at different moments, as
/// upstream's manager assumes).
#[derive(Debug, Default)]
pub(crate) struct ReservationBook {
    /// Each reservation's index, by id.
    index: HashMap<String, u32>,
    /// Each reservation's label and id, by index.
    names: Vec<(String, String)>,
    /// Each reservation's capacity, by index.
    capacity: Vec<u32>,
}

impl ReservationBook {
    /// The reservations of these pools' types.
    pub(crate) fn of<'a>(pools: impl IntoIterator<Item = &'a [InstanceType]>) -> ReservationBook {
        let mut book = ReservationBook::default();
        let reservations = pools
            .into_iter()
            .flatten()
            .flat_map(|t| &t.offerings)
            .filter_map(|o| o.reservation.as_ref());
        for reservation in reservations {
            match book.index.get(&reservation.id) {
                Some(&i) => {
                    let least = &mut book.capacity[i as usize];
                    *least = (*least).min(reservation.capacity);
                }
                None => {
                    let i = u32::try_from(book.names.len()).unwrap_or(u32::MAX);
                    book.index.insert(reservation.id.clone(), i);
                    book.names
                        .push((reservation.label.clone(), reservation.id.clone()));
                    book.capacity.push(reservation.capacity);
                }
            }
        }
        book
    }

    /// Whether no pool offers a reservation.
    pub(crate) fn is_empty(&self) -> bool {
        self.names.is_empty()
    }
}

/// The reservations one simulation's claims take: what each has left.
#[derive(Clone, Debug)]
pub(crate) struct Reservations {
    book: Arc<ReservationBook>,
    /// How each claim that fails to reserve is treated; `None` when the
    /// `ReservedCapacity` gate is off and nothing is counted.
    mode: Option<ReservedMode>,
    /// Each reservation's units left, by index.
    left: Vec<u32>,
}

impl Reservations {
    /// The reservations of `book`, all units left, taken as `mode` says
    /// (`None`: not counted at all).
    pub(crate) fn new(book: Arc<ReservationBook>, mode: Option<ReservedMode>) -> Reservations {
        let left = book.capacity.clone();
        Reservations { book, mode, left }
    }

    /// These reservations, taken as `mode` says, all units left again.
    pub(crate) fn with_mode(self, mode: Option<ReservedMode>) -> Reservations {
        Reservations::new(self.book, mode)
    }

    /// Whether claims take reservations at all.
    pub(crate) fn counting(&self) -> bool {
        self.mode.is_some() && !self.book.is_empty()
    }

    /// The reservations a claim holding `held` (ascending indices) holds once
    /// narrowed to `requirements` and the `options` of `template`'s types:
    /// one of every reservation of a compatible available reserved offering
    /// that it holds already or that has a unit left; or, in strict mode,
    /// why it refuses.
    pub(crate) fn to_hold(
        &self,
        template: &Template<'_>,
        options: &TypeSet,
        requirements: &Requirements,
        held: &[u32],
    ) -> Result<Vec<u32>, ReservedRefusal> {
        if !self.counting() || !template.has_reservations {
            return Ok(Vec::new());
        }
        let filter = OfferingFilter::new(requirements);
        let mut compatible = false;
        let mut hold = Vec::new();
        for t in options.iter() {
            let reserved = template.types[t]
                .offerings
                .iter()
                .filter(|o| o.available)
                .filter_map(|o| Some((o, o.reservation.as_ref()?)));
            for (offering, reservation) in reserved {
                if !filter.admits(offering) {
                    continue;
                }
                compatible = true;
                let Some(&i) = self.book.index.get(&reservation.id) else {
                    continue;
                };
                if held.binary_search(&i).is_ok() || self.left[i as usize] > 0 {
                    hold.push(i);
                }
            }
        }
        hold.sort_unstable();
        hold.dedup();
        if self.mode == Some(ReservedMode::Strict) && hold.is_empty() {
            if compatible {
                return Err(ReservedRefusal::NoneLeft);
            }
            if !held.is_empty() {
                return Err(ReservedRefusal::WouldLoseAll);
            }
        }
        Ok(hold)
    }

    /// A claim that held `before` now holds `after` (both ascending): it
    /// takes a unit of each reservation new to it and gives back each it
    /// dropped.
    pub(crate) fn exchange(&mut self, before: &[u32], after: &[u32]) {
        for &i in after {
            if before.binary_search(&i).is_err() {
                let left = &mut self.left[i as usize];
                debug_assert!(*left > 0, "a reservation taken beyond its capacity");
                *left = left.saturating_sub(1);
            }
        }
        for &i in before {
            if after.binary_search(&i).is_err() {
                self.left[i as usize] += 1;
            }
        }
    }

    /// What keeps a claim of `template` holding no reservation, with
    /// `requirements` and instance types `options`, out of the reservations:
    /// `DoesNotExist` on the label of each reserved offering it would
    /// otherwise allow. Only a simulation's claim that fell back can allow
    /// one (provisioning refuses the pod instead); without this its launch
    /// would take a unit another claim holds.
    pub(crate) fn exclusions(
        &self,
        template: &Template<'_>,
        options: &TypeSet,
        requirements: &Requirements,
    ) -> Vec<Requirement> {
        if !self.counting() || !template.has_reservations {
            return Vec::new();
        }
        let filter = OfferingFilter::new(requirements);
        let mut labels: Vec<&str> = options
            .iter()
            .flat_map(|t| &template.types[t].offerings)
            .filter(|o| filter.admits_available(o))
            .filter_map(|o| o.reservation.as_ref())
            .map(|r| r.label.as_str())
            .collect();
        labels.sort_unstable();
        labels.dedup();
        labels
            .into_iter()
            .map(Requirement::does_not_exist)
            .collect()
    }

    /// What pins a claim holding `held` to its reservations: capacity type
    /// `reserved`, and each reservation label `In` the ids held on it.
    /// Empty when it holds none.
    pub(crate) fn pins(&self, held: &[u32]) -> Vec<Requirement> {
        if held.is_empty() {
            return Vec::new();
        }
        let mut by_label: Vec<(&str, Vec<&str>)> = Vec::new();
        for &i in held {
            let (label, id) = &self.book.names[i as usize];
            match by_label.iter_mut().find(|(l, _)| l == label) {
                Some((_, ids)) => ids.push(id),
                None => by_label.push((label, vec![id])),
            }
        }
        let mut pins = vec![Requirement::in_values(
            CAPACITY_TYPE_LABEL_KEY,
            [CAPACITY_TYPE_RESERVED],
        )];
        pins.extend(
            by_label
                .into_iter()
                .map(|(label, ids)| Requirement::in_values(label, ids)),
        );
        pins
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cloudprovider::{Offering, Reservation};
    use crate::features::{FeatureGate, FeatureGates};
    use crate::planning::PlanningOptions;
    use crate::planning::{MinValuesPolicy, Packing};
    use crate::provisioning::test_support::{instance_type, pod, snapshot};
    use crate::provisioning::{
        ProvisioningOptions, ProvisioningPlan, plan_provisioning_with, schedule_fenced, validate,
    };
    use crate::snapshot::Snapshot;

    const LABEL: &str = "example.com/reservation-id";

    /// A 4-core type on demand at 1.0, with a reserved offering at 0.1 in
    /// each of `reservations` (id, capacity); pods of 3 cores, one per node.
    fn cluster(reservations: &[(&str, u32)], pods: usize) -> Snapshot {
        let mut m4 = instance_type("m-4", 4, 16, 1.0);
        for &(id, capacity) in reservations {
            let reservation = Reservation {
                label: LABEL.to_owned(),
                id: id.to_owned(),
                capacity,
            };
            m4.offerings
                .push(Offering::reserved("zone-a", 0.1, reservation));
        }
        let m4 = crate::cloudprovider::InstanceType::new(
            m4.name.clone(),
            [("kubernetes.io/arch", "amd64")],
            m4.offerings,
            m4.capacity,
            m4.overhead,
        );
        let pods = (0..pods)
            .map(|i| pod(&format!("p{i}"), "3", "1Gi"))
            .collect();
        snapshot(vec![m4], pods)
    }

    fn requirement<'p>(plan: &'p ProvisioningPlan, claim: usize, key: &str) -> Vec<&'p str> {
        plan.node_claims[claim]
            .requirements
            .iter()
            .find(|r| r.key == key)
            .map(|r| r.values.iter().collect())
            .unwrap_or_default()
    }

    #[test]
    fn provisioning_takes_what_a_reservation_has_and_the_rest_waits() {
        let cluster = cluster(&[("r-1", 2)], 3);
        let plan = plan_provisioning_with(&cluster, &ProvisioningOptions::default());
        assert!(
            validate(&cluster, &plan).is_empty(),
            "{:?}",
            validate(&cluster, &plan)
        );
        assert_eq!(plan.node_claims.len(), 2);
        for claim in 0..2 {
            assert_eq!(
                requirement(&plan, claim, CAPACITY_TYPE_LABEL_KEY),
                ["reserved"]
            );
            assert_eq!(requirement(&plan, claim, LABEL), ["r-1"]);
            let launch = plan.node_claims[claim].launch.as_ref().expect("a launch");
            assert_eq!(launch.reservation_id.as_deref(), Some("r-1"));
        }
        // The third pod waits for the reservation rather than going on demand.
        assert_eq!(plan.unschedulable.len(), 1);
        assert!(
            plan.unschedulable[0]
                .reason
                .contains("could not be reserved"),
            "{}",
            plan.unschedulable[0].reason
        );
        // The cost mode keeps the claims of a pool offering reservations.
        let cost = plan_provisioning_with(&cluster, &Packing::Cost.into());
        assert_eq!(cost, plan);
    }

    #[test]
    fn a_claim_holds_every_reservation_it_could_launch_into() {
        let cluster = cluster(&[("r-1", 1), ("r-2", 1)], 2);
        let plan = plan_provisioning_with(&cluster, &ProvisioningOptions::default());
        // The first claim holds both (pessimistically): the second pod waits.
        assert_eq!(plan.node_claims.len(), 1);
        assert_eq!(requirement(&plan, 0, LABEL), ["r-1", "r-2"]);
        assert_eq!(plan.unschedulable.len(), 1);
        assert!(validate(&cluster, &plan).is_empty());
    }

    #[test]
    fn simulations_fall_back_and_the_gate_turns_counting_off() {
        let cluster = cluster(&[("r-1", 1)], 2);
        let fallback = schedule_fenced(
            &cluster,
            Default::default(),
            Packing::Upstream,
            MinValuesPolicy::Strict,
            Some(ReservedMode::Fallback),
            false,
        );
        assert_eq!(fallback.node_claims.len(), 2);
        assert!(
            validate(&cluster, &fallback).is_empty(),
            "{:?} {:?}",
            validate(&cluster, &fallback),
            fallback
        );
        let launches: Vec<&str> = fallback
            .node_claims
            .iter()
            .filter_map(|c| c.launch.as_ref())
            .map(|l| l.capacity_type.as_str())
            .collect();
        assert_eq!(launches, ["reserved", "on-demand"]);
        // Gate off: nothing counted nor pinned (upstream's core), and with the
        // reserved offerings withheld, as providers do, both go on demand.
        let off =
            ProvisioningOptions::from(PlanningOptions::default().with_feature_gates(
                FeatureGates::UPSTREAM.with(FeatureGate::ReservedCapacity, false),
            ));
        let mut withheld = cluster.clone();
        assert_eq!(withheld.withhold_reservations(), 1);
        let plan = plan_provisioning_with(&withheld, &off);
        assert_eq!(plan.node_claims.len(), 2);
        assert!((0..2).all(|c| requirement(&plan, c, LABEL).is_empty()));
        assert!(validate(&withheld, &plan).is_empty());
    }

    #[test]
    fn withholding_counts_each_offering_once_and_keeps_shared_lists_shared() {
        let mut two_pools = cluster(&[("r-1", 1), ("r-2", 2)], 1);
        let types = Arc::clone(&two_pools.instance_types["default"]);
        two_pools
            .instance_types
            .insert("other".to_owned(), Arc::clone(&types));
        // Two reserved offerings, offered to two pools: two withheld.
        assert_eq!(two_pools.withhold_reservations(), 2);
        let (a, b) = (
            &two_pools.instance_types["default"],
            &two_pools.instance_types["other"],
        );
        assert!(Arc::ptr_eq(a, b));
        assert!(
            a.iter()
                .flat_map(|t| &t.offerings)
                .all(|o| o.reservation.is_none() || !o.available)
        );
        assert_eq!(two_pools.withhold_reservations(), 0);
    }

    #[test]
    fn the_least_capacity_any_pool_reads_counts_and_exchanges_balance() {
        let mut types = vec![instance_type("a", 1, 1, 1.0), instance_type("b", 1, 1, 1.0)];
        for (t, capacity) in types.iter_mut().zip([3, 1]) {
            let reservation = Reservation {
                label: LABEL.to_owned(),
                id: "r-1".to_owned(),
                capacity,
            };
            t.offerings
                .push(Offering::reserved("zone-a", 0.1, reservation));
        }
        let book = Arc::new(ReservationBook::of([types.as_slice()]));
        assert_eq!(book.capacity, [1]);
        let mut reservations = Reservations::new(book, Some(ReservedMode::Strict));
        reservations.exchange(&[], &[0]);
        assert_eq!(reservations.left, [0]);
        // Holding it again takes nothing more; dropping it gives it back.
        reservations.exchange(&[0], &[0]);
        assert_eq!(reservations.left, [0]);
        reservations.exchange(&[0], &[]);
        assert_eq!(reservations.left, [1]);
        let pins = reservations.pins(&[0]);
        assert_eq!(pins.len(), 2);
        assert_eq!(pins[1].key(), LABEL);
        assert!(reservations.pins(&[]).is_empty());
    }
}
