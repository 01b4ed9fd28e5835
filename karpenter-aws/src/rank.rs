//! The order the AWS provider launches offerings in, as far as a pairwise
//! rank can say it (upstream's `pkg/providers/instance/`): the capacity type
//! first (a reservation, then spot, then on-demand: upstream picks the
//! capacity type before it asks EC2 for a fleet), then ordinary types before
//! exotic ones (upstream's exotic filter keeps metal, GPU and accelerator
//! types only when nothing else is left), then the price, and the type's
//! name and the zone so that the choice is the same every run.

use std::cmp::Ordering;

use karpenter_core::cloudprovider::{InstanceType, LaunchRank, Offering};
use karpenter_core::scheduling::{CAPACITY_TYPE_RESERVED, CAPACITY_TYPE_SPOT};

use crate::instancetype::resources::{
    RESOURCE_AMD_GPU, RESOURCE_HABANA_GAUDI, RESOURCE_NEURON, RESOURCE_NVIDIA_GPU,
};

/// The label with a type's size (`xlarge`, `metal-24xl`).
const INSTANCE_SIZE: &str = "karpenter.k8s.aws/instance-size";

/// The AWS provider's launch rank: capacity type reserved, then spot, then
/// on-demand; then non-exotic before exotic types; then price, name and
/// zone. A plan on AWS names its launch by it.
pub const LAUNCH_RANK: LaunchRank = LaunchRank::new("aws", rank);

/// Orders `a` before `b` when the provider launches `a` first.
fn rank(a: (&InstanceType, &Offering), b: (&InstanceType, &Offering)) -> Ordering {
    capacity_type_order(a.1)
        .cmp(&capacity_type_order(b.1))
        .then_with(|| is_exotic(a.0).cmp(&is_exotic(b.0)))
        .then_with(|| a.1.price.total_cmp(&b.1.price))
        .then_with(|| a.0.name.cmp(&b.0.name))
        .then_with(|| a.1.zone.cmp(&b.1.zone))
        .then_with(|| a.1.reservation_id().cmp(&b.1.reservation_id()))
}

/// Reserved first, spot second, on-demand (and anything else) last: the
/// order in which upstream settles the capacity type of a launch.
fn capacity_type_order(offering: &Offering) -> u8 {
    match offering.capacity_type.as_str() {
        CAPACITY_TYPE_RESERVED => 0,
        CAPACITY_TYPE_SPOT => 1,
        _ => 2,
    }
}

/// Whether upstream's exotic filter sets the type aside: a bare-metal size,
/// or any GPU, Neuron or Gaudi device in its capacity.
pub(crate) fn is_exotic(instance_type: &InstanceType) -> bool {
    let metal = instance_type
        .requirements
        .get_defined(INSTANCE_SIZE)
        .is_some_and(|size| !size.is_complement() && size.values().any(|v| v.contains("metal")));
    metal
        || [
            RESOURCE_NVIDIA_GPU,
            RESOURCE_AMD_GPU,
            RESOURCE_NEURON,
            RESOURCE_HABANA_GAUDI,
        ]
        .iter()
        .any(|resource| instance_type.capacity.get(resource) > 0)
}

#[cfg(test)]
mod tests {
    use karpenter_core::cloudprovider::Reservation;
    use karpenter_core::scheduling::CAPACITY_TYPE_ON_DEMAND;

    use super::*;
    use crate::{Catalog, instance_type};

    fn ty(name: &str) -> InstanceType {
        instance_type(Catalog::embedded().unwrap(), name, "us-east-1").unwrap()
    }

    fn reserved(price: f64) -> Offering {
        let reservation = Reservation {
            label: "karpenter.k8s.aws/capacity-reservation-id".to_owned(),
            id: "cr-1".to_owned(),
            capacity: 1,
        };
        Offering::reserved("us-east-1a", price, reservation)
    }

    #[test]
    fn metal_and_accelerated_types_are_exotic() {
        for name in [
            "m5.metal",
            "p3.2xlarge",
            "g4ad.xlarge",
            "inf1.xlarge",
            "dl1.24xlarge",
        ] {
            assert!(is_exotic(&ty(name)), "{name} should be exotic");
        }
        for name in ["m5.large", "c5.24xlarge", "r5.xlarge", "t3.micro"] {
            assert!(!is_exotic(&ty(name)), "{name} should not be exotic");
        }
    }

    #[test]
    fn capacity_type_comes_before_price() {
        let m5 = ty("m5.large");
        let on_demand = Offering::new("us-east-1a", CAPACITY_TYPE_ON_DEMAND, 0.01);
        let spot = Offering::new("us-east-1a", CAPACITY_TYPE_SPOT, 5.0);
        let reservation = reserved(9.0);
        let order = |a, b| LAUNCH_RANK.compare((&m5, a), (&m5, b));
        assert_eq!(order(&reservation, &spot), Ordering::Less);
        assert_eq!(order(&spot, &on_demand), Ordering::Less);
        assert_eq!(order(&on_demand, &reservation), Ordering::Greater);
    }

    #[test]
    fn ordinary_types_launch_before_cheaper_exotic_ones() {
        let (metal, gpu, plain) = (ty("m5.metal"), ty("p3.2xlarge"), ty("m5.24xlarge"));
        let cheap = Offering::new("us-east-1a", CAPACITY_TYPE_SPOT, 0.1);
        let dear = Offering::new("us-east-1a", CAPACITY_TYPE_SPOT, 10.0);
        assert_eq!(
            LAUNCH_RANK.compare((&plain, &dear), (&metal, &cheap)),
            Ordering::Less
        );
        assert_eq!(
            LAUNCH_RANK.compare((&gpu, &cheap), (&plain, &dear)),
            Ordering::Greater
        );
        // The capacity type still decides first: exotic spot beats plain on-demand.
        let on_demand = Offering::new("us-east-1a", CAPACITY_TYPE_ON_DEMAND, 0.1);
        assert_eq!(
            LAUNCH_RANK.compare((&gpu, &dear), (&plain, &on_demand)),
            Ordering::Less
        );
    }

    #[test]
    fn equal_kinds_go_by_price_then_name_then_zone() {
        let (c5, m5) = (ty("c5.large"), ty("m5.large"));
        let at = |zone: &str, price| Offering::new(zone, CAPACITY_TYPE_ON_DEMAND, price);
        let (a, b) = (at("us-east-1b", 0.1), at("us-east-1a", 0.2));
        assert_eq!(LAUNCH_RANK.compare((&m5, &a), (&c5, &b)), Ordering::Less);
        let (a, b) = (at("us-east-1b", 0.1), at("us-east-1a", 0.1));
        assert_eq!(LAUNCH_RANK.compare((&c5, &a), (&m5, &b)), Ordering::Less);
        assert_eq!(LAUNCH_RANK.compare((&m5, &a), (&m5, &b)), Ordering::Greater);
        assert_eq!(LAUNCH_RANK.compare((&m5, &a), (&m5, &a)), Ordering::Equal);
        assert_eq!(LAUNCH_RANK.name(), "aws");
    }
}
