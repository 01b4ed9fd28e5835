//! An instance type: what a node of it holds, its labels, and its offerings.

use std::cmp::Ordering;

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
/// offerings, available or not: whether an offering can be launched now is the
/// offering's business, not the type's.
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
    /// offerings' zones and capacity types are added to its requirements.
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
        requirements.add(Requirement::in_values(
            LABEL_TOPOLOGY_ZONE,
            offerings.iter().map(|o| o.zone.as_str()),
        ));
        requirements.add(Requirement::in_values(
            CAPACITY_TYPE_LABEL_KEY,
            offerings.iter().map(|o| o.capacity_type.as_str()),
        ));
        InstanceType {
            name,
            requirements,
            offerings,
            capacity,
            overhead,
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

/// Orders offerings by price, then zone, then capacity type.
pub(crate) fn cheaper(a: &Offering, b: &Offering) -> Ordering {
    a.price
        .total_cmp(&b.price)
        .then_with(|| a.zone.cmp(&b.zone))
        .then_with(|| a.capacity_type.cmp(&b.capacity_type))
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
    fn requirements_hold_labels_name_and_every_offering() {
        let it = sample();
        let zone = it.requirements.get(LABEL_TOPOLOGY_ZONE);
        assert!(zone.has("zone-a") && zone.has("zone-b") && !zone.has("zone-c"));
        let capacity_type = it.requirements.get(CAPACITY_TYPE_LABEL_KEY);
        assert!(capacity_type.has("spot") && capacity_type.has("on-demand"));
        assert!(it.requirements.get(LABEL_INSTANCE_TYPE_STABLE).has("m-4x"));
        assert!(it.requirements.get("kubernetes.io/arch").has("amd64"));
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
}
