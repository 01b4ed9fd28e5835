//! The AWS provider's options on a replay, kept apart from
//! [`ReplayCloud`](super::ReplayCloud)'s other fields because they hold
//! floats and it is `Eq`.

use std::collections::BTreeMap;

/// The AWS provider's options a replay takes, as `karpenter-sim`'s
/// `--spot-prices`, `--reserved-enis` and `--vm-memory-overhead-percent`
/// give them. The planning side's price book, the provider's instance
/// types and the in-memory EC2's spot prices are all made from these.
///
/// Equal when every field is, the memory overhead compared by its bits (as
/// are the prices): [`ReplayCloud`](super::ReplayCloud) is `Eq`, and a
/// float's `==` is not an equivalence (NaN is not equal to itself), while
/// its bits are. Two options equal this way describe the same replay.
#[derive(Clone, Debug)]
pub struct AwsReplayOptions {
    /// Spot prices per hour by (instance type, zone); a pair not listed
    /// has no spot offering. `None`: spot is priced as on-demand, as
    /// upstream does before its first spot price refresh.
    pub spot_prices: Option<BTreeMap<(String, String), f64>>,
    /// Network interfaces kept back from pods on every node (upstream's
    /// `--reserved-enis`, default 0).
    pub reserved_enis: u32,
    /// The share of an instance's memory the hypervisor keeps (upstream's
    /// `--vm-memory-overhead-percent`, default 0.075).
    pub vm_memory_overhead_percent: f64,
}

impl Default for AwsReplayOptions {
    fn default() -> Self {
        AwsReplayOptions {
            spot_prices: None,
            reserved_enis: 0,
            vm_memory_overhead_percent: karpenter_aws::DEFAULT_VM_MEMORY_OVERHEAD_PERCENT,
        }
    }
}

impl PartialEq for AwsReplayOptions {
    fn eq(&self, other: &Self) -> bool {
        let same_prices = match (&self.spot_prices, &other.spot_prices) {
            (None, None) => true,
            (Some(a), Some(b)) => {
                a.len() == b.len()
                    && a.iter()
                        .zip(b)
                        .all(|((ka, pa), (kb, pb))| ka == kb && pa.to_bits() == pb.to_bits())
            }
            _ => false,
        };
        same_prices
            && self.reserved_enis == other.reserved_enis
            && self.vm_memory_overhead_percent.to_bits()
                == other.vm_memory_overhead_percent.to_bits()
    }
}

impl Eq for AwsReplayOptions {}

impl AwsReplayOptions {
    /// The provider's instance-type options: these, with reservations
    /// offered only under the `ReservedCapacity` gate, as upstream's.
    pub(super) fn instance_type_options(
        &self,
        reserved_capacity: bool,
    ) -> karpenter_aws::InstanceTypeOptions {
        karpenter_aws::InstanceTypeOptions {
            spot_prices: self.spot_prices.clone(),
            reserved_capacity,
            reserved_enis: self.reserved_enis,
            vm_memory_overhead_percent: self.vm_memory_overhead_percent,
            ..karpenter_aws::InstanceTypeOptions::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn priced(price: f64) -> AwsReplayOptions {
        AwsReplayOptions {
            spot_prices: Some(BTreeMap::from([(
                ("m5.large".to_owned(), "us-east-1a".to_owned()),
                price,
            )])),
            ..AwsReplayOptions::default()
        }
    }

    #[test]
    fn equality_is_an_equivalence_over_the_floats_bits() {
        // NaN equals itself here, so `Eq` holds for every value.
        let nan = AwsReplayOptions {
            vm_memory_overhead_percent: f64::NAN,
            ..AwsReplayOptions::default()
        };
        assert_eq!(nan, nan.clone());
        assert_ne!(nan, AwsReplayOptions::default());
        assert_eq!(priced(0.1), priced(0.1));
        assert_ne!(priced(0.1), priced(0.2));
        assert_ne!(priced(0.1), AwsReplayOptions::default());
        let enis = AwsReplayOptions {
            reserved_enis: 1,
            ..AwsReplayOptions::default()
        };
        assert_ne!(enis, AwsReplayOptions::default());
    }
}
