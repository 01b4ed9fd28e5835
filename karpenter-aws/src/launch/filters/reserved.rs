//! The three filters of a reserved launch: one kind of reservation, one
//! capacity block, one reservation per zone.

use std::collections::BTreeMap;

use karpenter_core::cloudprovider::{InstanceType, Offering};
use karpenter_core::scheduling::{CAPACITY_TYPE_LABEL_KEY, CAPACITY_TYPE_RESERVED, Requirements};

use crate::instancetype::labels::{CAPACITY_RESERVATION_INTERRUPTIBLE, CAPACITY_RESERVATION_TYPE};

/// The `capacity-reservation-type` of a capacity block.
const CAPACITY_BLOCK: &str = "capacity-block";
/// The `capacity-reservation-type` of an on-demand capacity reservation.
const DEFAULT_RESERVATION: &str = "default";

/// A kind of reservation: its type and whether it is interruptible. One
/// fleet request can launch into one kind only.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Kind {
    capacity_block: bool,
    interruptible: bool,
}

impl Kind {
    /// Upstream's tie-break between kinds at the same price: plain
    /// reservations, then capacity blocks, then interruptible reservations.
    fn priority(self) -> u8 {
        match (self.capacity_block, self.interruptible) {
            (false, false) => 0,
            (true, _) => 1,
            (false, true) => 2,
        }
    }

    /// The kind of a reserved offering; `None` for a reservation type this
    /// provider does not know (upstream panics there).
    fn of(offering: &Offering) -> Option<Kind> {
        let reservation_type = offering.requirements.get(CAPACITY_RESERVATION_TYPE).any()?;
        let capacity_block = match reservation_type.as_str() {
            CAPACITY_BLOCK => true,
            DEFAULT_RESERVATION => false,
            _ => return None,
        };
        Some(Kind {
            capacity_block,
            interruptible: reservation_flag(offering),
        })
    }
}

fn reservation_flag(offering: &Offering) -> bool {
    offering
        .requirements
        .get(CAPACITY_RESERVATION_INTERRUPTIBLE)
        .any()
        .is_some_and(|v| v == "true")
}

fn allows_reserved(requirements: &Requirements) -> bool {
    requirements
        .get(CAPACITY_TYPE_LABEL_KEY)
        .has(CAPACITY_TYPE_RESERVED)
}

fn reserved_offerings<'a>(
    it: &'a InstanceType,
    requirements: &'a Requirements,
) -> impl Iterator<Item = &'a Offering> + 'a {
    it.available_offerings(requirements)
        .filter(|o| o.capacity_type == CAPACITY_TYPE_RESERVED)
}

/// For a claim that allows reserved capacity, keeps the types of the one
/// kind of reservation with the cheapest available compatible offering
/// (ties by [`Kind::priority`]), each with only that kind's reserved
/// offerings. Unchanged when no type has a reserved offering.
pub(crate) fn capacity_reservation_type(
    requirements: &Requirements,
    types: Vec<InstanceType>,
) -> Vec<InstanceType> {
    if !allows_reserved(requirements) {
        return types;
    }
    let mut best: Option<(f64, Kind)> = None;
    for it in &types {
        for offering in reserved_offerings(it, requirements) {
            let Some(kind) = Kind::of(offering) else {
                continue;
            };
            let better = best.is_none_or(|(price, current)| {
                offering
                    .price
                    .total_cmp(&price)
                    .then(kind.priority().cmp(&current.priority()))
                    .is_lt()
            });
            if better {
                best = Some((offering.price, kind));
            }
        }
    }
    let Some((_, chosen)) = best else {
        return types;
    };
    types
        .into_iter()
        .filter(|it| reserved_offerings(it, requirements).any(|o| Kind::of(o) == Some(chosen)))
        .map(|mut it| {
            it.mark_unavailable(|o| {
                o.capacity_type != CAPACITY_TYPE_RESERVED || Kind::of(o) != Some(chosen)
            });
            it
        })
        .collect()
}

/// Whether the launch is into capacity blocks: reserved is allowed and the
/// first offering saying what reservation it is names a capacity block
/// (after [`capacity_reservation_type`] every offering left is of one kind).
fn launches_capacity_block(requirements: &Requirements, types: &[InstanceType]) -> bool {
    allows_reserved(requirements)
        && types
            .iter()
            .flat_map(|it| &it.offerings)
            .find_map(|o| o.requirements.get_defined(CAPACITY_RESERVATION_TYPE))
            .and_then(|r| r.any())
            .is_some_and(|t| t == CAPACITY_BLOCK)
}

/// For a capacity-block launch, keeps only the cheapest available
/// compatible capacity-block offering of all types (the first type wins a
/// tie), since a block launches one instance type. Unchanged otherwise.
pub(crate) fn capacity_block(
    requirements: &Requirements,
    types: Vec<InstanceType>,
) -> Vec<InstanceType> {
    if !launches_capacity_block(requirements, &types) {
        return types;
    }
    let mut chosen: Option<(usize, usize, f64)> = None;
    for (t, it) in types.iter().enumerate() {
        for (o, offering) in it.offerings.iter().enumerate() {
            let block = offering.available
                && offering.capacity_type == CAPACITY_TYPE_RESERVED
                && offering.is_compatible(requirements)
                && Kind::of(offering).is_some_and(|k| k.capacity_block);
            if block && chosen.is_none_or(|(_, _, price)| offering.price < price) {
                chosen = Some((t, o, offering.price));
            }
        }
    }
    let Some((t, o, _)) = chosen else {
        return types;
    };
    let mut kept: Vec<InstanceType> = types.into_iter().nth(t).into_iter().collect();
    for it in &mut kept {
        if let Some(chosen) = it.offerings.get(o).cloned() {
            it.mark_unavailable(|offering| *offering != chosen);
        }
    }
    kept
}

/// For a claim that allows reserved capacity, keeps per type and zone the
/// available compatible reservation that can start the most instances (the
/// first wins a tie), and drops types with none. Unchanged when no type has
/// one.
pub(crate) fn reserved_offering(
    requirements: &Requirements,
    types: Vec<InstanceType>,
) -> Vec<InstanceType> {
    if !allows_reserved(requirements) {
        return types;
    }
    let mut kept = Vec::new();
    for it in &types {
        let mut per_zone: BTreeMap<&str, &Offering> = BTreeMap::new();
        for offering in reserved_offerings(it, requirements) {
            let capacity = |o: &Offering| o.reservation.as_ref().map_or(0, |r| r.capacity);
            let entry = per_zone.entry(offering.zone.as_str()).or_insert(offering);
            if capacity(offering) > capacity(entry) {
                *entry = offering;
            }
        }
        if per_zone.is_empty() {
            continue;
        }
        let chosen: Vec<Offering> = per_zone.into_values().cloned().collect();
        let mut narrowed = it.clone();
        narrowed.mark_unavailable(|o| !chosen.contains(o));
        kept.push(narrowed);
    }
    if kept.is_empty() { types } else { kept }
}
