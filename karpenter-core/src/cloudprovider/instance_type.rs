//! An instance type: what a node of it holds, its labels, and its offerings.

use std::cmp::Ordering;
use std::collections::BTreeSet;

use super::{Offering, OfferingFilter};
use crate::resources::ResourceList;
use crate::scheduling::{
    CAPACITY_TYPE_LABEL_KEY, LABEL_INSTANCE_TYPE_STABLE, LABEL_TOPOLOGY_ZONE, Requirement,
    Requirements,
};

/// A kind of node a provider can launch.
///
/// Its requirements hold the labels every node of the type carries (instance type,
/// architecture, OS, provider labels), and the zones and capacity types of its
/// *available* offerings, as upstream builds them: a zone where the type cannot
/// launch now is no zone of the type's (nor, through it, a topology domain). Mark
/// offerings unavailable with [`mark_unavailable`](Self::mark_unavailable), which
/// keeps the two in step.
#[derive(Clone, Debug, PartialEq)]
pub struct InstanceType {
    /// The name, the value of `node.kubernetes.io/instance-type`.
    pub name: String,
    /// The labels of its nodes, as requirements.
    pub requirements: Requirements,
    /// Where and how it can be bought.
    pub offerings: Vec<Offering>,
    /// What a node of this type has.
    pub capacity: ResourceList,
    /// What the system keeps of it: kube-reserved, system-reserved and the eviction
    /// threshold, summed.
    pub overhead: ResourceList,
}

impl InstanceType {
    /// An instance type whose nodes carry `labels`; the instance-type label and the
    /// offerings' zones and capacity types are added to its requirements, and so
    /// is, on each key of the offerings' further requirements that every offering
    /// limits to values (`In`), every value some offering allows.
    pub fn new<I, K, V>(
        name: impl Into<String>,
        labels: I,
        offerings: Vec<Offering>,
        capacity: ResourceList,
        overhead: ResourceList,
    ) -> InstanceType
    where
        I: IntoIterator<Item = (K, V)>,
        K: AsRef<str>,
        V: AsRef<str>,
    {
        let name = name.into();
        let mut requirements = Requirements::from_labels(labels);
        requirements.add(Requirement::in_values(LABEL_INSTANCE_TYPE_STABLE, [&name]));
        let mut instance_type = InstanceType {
            name,
            requirements,
            offerings,
            capacity,
            overhead,
        };
        instance_type.offering_requirements();
        instance_type
    }

    /// Marks unavailable each offering `unavailable` picks, and narrows the
    /// type's zone and capacity-type requirements to what stays available.
    pub fn mark_unavailable(&mut self, mut unavailable: impl FnMut(&Offering) -> bool) {
        let mut changed = false;
        for offering in &mut self.offerings {
            if offering.available && unavailable(offering) {
                offering.available = false;
                changed = true;
            }
        }
        if changed {
            self.offering_requirements();
        }
    }

    /// Takes `used(id)` units from each of its reservations' capacity, and
    /// marks unavailable the reserved offerings it took from that are left
    /// with none: what a provider reports once instances launched into them.
    pub fn use_reservations(&mut self, used: impl Fn(&str) -> u32) {
        for reservation in self
            .offerings
            .iter_mut()
            .filter_map(|o| o.reservation.as_mut())
        {
            reservation.capacity = reservation.capacity.saturating_sub(used(&reservation.id));
        }
        self.mark_unavailable(|o| {
            o.reservation
                .as_ref()
                .is_some_and(|r| r.capacity == 0 && used(&r.id) > 0)
        });
    }

    /// The zone and capacity-type requirements, and the union of the
    /// offerings' further requirements, from the available offerings (upstream's
    /// fake and Azure providers build them so).
    fn offering_requirements(&mut self) {
        let available: Vec<&Offering> = self.offerings.iter().filter(|o| o.available).collect();
        let zones = Requirement::in_values(
            LABEL_TOPOLOGY_ZONE,
            available.iter().map(|o| o.zone.as_str()),
        );
        let capacity_types = Requirement::in_values(
            CAPACITY_TYPE_LABEL_KEY,
            available.iter().map(|o| o.capacity_type.as_str()),
        );
        let unions = offering_unions(&available);
        let further: Vec<String> = self
            .offerings
            .iter()
            .flat_map(|o| o.requirements.keys().map(str::to_owned))
            .collect();
        for key in further
            .iter()
            .map(String::as_str)
            .chain([LABEL_TOPOLOGY_ZONE, CAPACITY_TYPE_LABEL_KEY])
        {
            self.requirements.remove(key);
        }
        self.requirements.add(zones);
        self.requirements.add(capacity_types);
        for requirement in unions {
            self.requirements.add(requirement);
        }
    }

    /// Whether a claim with `requirements` may be launched as this type: no key
    /// that both name has values in neither (upstream's
    /// `InstanceType.Requirements.Intersects`). A key only one side names takes
    /// no part, so a provider's own labels on the type (`example.com/family`)
    /// never keep it from a pool that does not mention them.
    ///
    /// This is the one test of a type against requirements: the scheduler's
    /// filter, the lower bound and the plan validator all ask it. Whether a
    /// *pod* may select a label is another question, answered by
    /// [`Requirements::compatible`] against the claim's requirements.
    pub fn intersects(&self, requirements: &Requirements) -> bool {
        self.requirements.is_intersecting(requirements)
    }

    /// What pods may use on a node of this type: capacity less overhead (negative
    /// where the overhead is larger, which then fits nothing).
    pub fn allocatable(&self) -> ResourceList {
        self.capacity
            .checked_sub(&self.overhead)
            .unwrap_or_default()
    }

    /// The offerings that can be launched now and satisfy `requirements`.
    pub fn available_offerings<'a>(
        &'a self,
        requirements: &'a Requirements,
    ) -> impl Iterator<Item = &'a Offering> + 'a {
        self.offerings
            .iter()
            .filter(move |o| o.available && o.is_compatible(requirements))
    }

    /// The cheapest offering that can be launched now and satisfies
    /// `requirements`; ties go to the zone, then the capacity type, in name order,
    /// so the choice never depends on the order offerings were listed in.
    pub fn cheapest_offering(&self, requirements: &Requirements) -> Option<&Offering> {
        self.cheapest_offering_with(&OfferingFilter::new(requirements))
    }

    /// [`cheapest_offering`](Self::cheapest_offering) with the requirements
    /// already looked up.
    pub fn cheapest_offering_with(&self, filter: &OfferingFilter<'_>) -> Option<&Offering> {
        let mut compatible = self.offerings.iter().filter(|o| filter.admits_available(o));
        let first = compatible.next()?;
        Some(compatible.fold(
            first,
            |best, o| if cheaper(o, best).is_lt() { o } else { best },
        ))
    }
}

/// On each key that every offering's further requirements limit to values
/// (`In`), the values any of them allows; where every offering says
/// `DoesNotExist`, that. A key some offering leaves open, only excludes values
/// on, or leaves absent while another names values, is left off: the type then
/// constrains it no further than its offerings together do.
fn offering_unions(offerings: &[&Offering]) -> Vec<Requirement> {
    let Some(first) = offerings.first() else {
        return Vec::new();
    };
    first
        .requirements
        .iter()
        .filter_map(|requirement| {
            let key = requirement.key();
            let mut values: BTreeSet<&str> = BTreeSet::new();
            let mut absent = false;
            for offering in offerings {
                let own = offering.requirements.get_defined(key)?;
                if own.is_complement() {
                    return None;
                }
                absent |= own.is_empty();
                values.extend(own.values());
            }
            (!absent || values.is_empty()).then(|| Requirement::in_values(key, values))
        })
        .collect()
}

/// Orders offerings by price, then zone, then capacity type, then
/// reservation id (several reserved offerings may share a zone).
pub(crate) fn cheaper(a: &Offering, b: &Offering) -> Ordering {
    a.price
        .total_cmp(&b.price)
        .then_with(|| a.zone.cmp(&b.zone))
        .then_with(|| a.capacity_type.cmp(&b.capacity_type))
        .then_with(|| a.reservation_id().cmp(&b.reservation_id()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resources::parse_milli;

    fn resources(cpu: &str, memory: &str) -> ResourceList {
        let mut list = ResourceList::new();
        list.set("cpu", parse_milli(cpu).unwrap());
        list.set("memory", parse_milli(memory).unwrap());
        list
    }

    fn sample() -> InstanceType {
        InstanceType::new(
            "m-4x",
            [("kubernetes.io/arch", "amd64")],
            vec![
                Offering::new("zone-b", "on-demand", 0.2),
                Offering::new("zone-a", "spot", 0.05).unavailable(),
                Offering::new("zone-a", "on-demand", 0.2),
                Offering::new("zone-b", "spot", 0.07),
            ],
            resources("4", "16Gi"),
            resources("100m", "1Gi"),
        )
    }

    #[test]
    fn requirements_hold_labels_name_and_the_available_offerings() {
        let it = sample();
        let zone = it.requirements.get(LABEL_TOPOLOGY_ZONE);
        assert!(zone.has("zone-a") && zone.has("zone-b") && !zone.has("zone-c"));
        let capacity_type = it.requirements.get(CAPACITY_TYPE_LABEL_KEY);
        assert!(capacity_type.has("spot") && capacity_type.has("on-demand"));
        assert!(it.requirements.get(LABEL_INSTANCE_TYPE_STABLE).has("m-4x"));
        assert!(it.requirements.get("kubernetes.io/arch").has("amd64"));
    }

    /// On each key every offering limits to values, the type takes the values
    /// of all of them; a key one offering leaves open stays off the type.
    #[test]
    fn requirements_hold_the_offerings_further_values() {
        let priority = |o: Offering, value: &str| {
            o.with_requirement(Requirement::in_values("example.com/priority", [value]))
                .with_requirement(Requirement::in_values("example.com/scope", ["zonal"]))
        };
        let it = InstanceType::new(
            "m-4x",
            [("kubernetes.io/arch", "amd64")],
            vec![
                priority(Offering::new("zone-a", "on-demand", 0.2), "regular"),
                priority(Offering::new("zone-a", "spot", 0.1), "spot"),
                Offering::new("zone-b", "spot", 0.1)
                    .with_requirement(Requirement::in_values("example.com/priority", ["spot"])),
            ],
            resources("4", "16Gi"),
            resources("100m", "1Gi"),
        );
        let priorities: Vec<&str> = it
            .requirements
            .get_defined("example.com/priority")
            .expect("a priority")
            .values()
            .collect();
        assert_eq!(priorities, ["regular", "spot"]);
        assert!(!it.requirements.contains_key("example.com/scope"));
        let absent = InstanceType::new(
            "m-2x",
            [("kubernetes.io/arch", "amd64")],
            vec![
                Offering::new("zone-a", "spot", 0.1)
                    .with_requirement(Requirement::does_not_exist("example.com/gpu")),
                Offering::new("zone-b", "spot", 0.1)
                    .with_requirement(Requirement::in_values("example.com/gpu", ["t4"])),
            ],
            resources("2", "8Gi"),
            resources("100m", "1Gi"),
        );
        assert!(!absent.requirements.contains_key("example.com/gpu"));
    }

    #[test]
    fn allocatable_is_capacity_less_overhead() {
        assert_eq!(sample().allocatable(), resources("3900m", "15Gi"));
    }

    #[test]
    fn cheapest_offering_skips_unavailable_and_incompatible_and_breaks_ties_by_zone() {
        let it = sample();
        let any = Requirements::new();
        assert_eq!(
            it.cheapest_offering(&any)
                .map(|o| (o.zone.as_str(), o.price)),
            Some(("zone-b", 0.07))
        );
        let on_demand: Requirements = [Requirement::in_values(
            CAPACITY_TYPE_LABEL_KEY,
            ["on-demand"],
        )]
        .into_iter()
        .collect();
        assert_eq!(
            it.cheapest_offering(&on_demand).map(|o| o.zone.as_str()),
            Some("zone-a")
        );
        let zone_c: Requirements = [Requirement::in_values(LABEL_TOPOLOGY_ZONE, ["zone-c"])]
            .into_iter()
            .collect();
        assert_eq!(it.cheapest_offering(&zone_c), None);
    }

    #[test]
    fn zones_and_capacity_types_are_those_of_available_offerings() {
        let mut it = sample();
        let zones = |it: &InstanceType| {
            let r = it.requirements.get(LABEL_TOPOLOGY_ZONE).into_owned();
            r.values().map(str::to_owned).collect::<Vec<_>>()
        };
        let capacity = |it: &InstanceType| {
            let r = it.requirements.get(CAPACITY_TYPE_LABEL_KEY).into_owned();
            r.values().map(str::to_owned).collect::<Vec<_>>()
        };
        // zone-a spot is unavailable, zone-a on-demand is not.
        assert_eq!(zones(&it), ["zone-a", "zone-b"]);
        assert_eq!(capacity(&it), ["on-demand", "spot"]);
        it.mark_unavailable(|o| o.zone == "zone-a");
        assert_eq!(zones(&it), ["zone-b"]);
        it.mark_unavailable(|o| o.capacity_type == "spot");
        assert_eq!(capacity(&it), ["on-demand"]);
        assert_eq!(it.offerings.iter().filter(|o| o.available).count(), 1);
        // With nothing available, no zone admits the type.
        it.mark_unavailable(|_| true);
        let in_b: Requirements = [Requirement::in_values(LABEL_TOPOLOGY_ZONE, ["zone-b"])]
            .into_iter()
            .collect();
        assert!(!it.intersects(&in_b));
    }
}
