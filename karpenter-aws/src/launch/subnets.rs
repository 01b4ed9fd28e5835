//! Which subnet a launch uses in each zone, after upstream's
//! `ZonalSubnetsForLaunch`: the one with the most free addresses, counting
//! the addresses launches still in flight are expected to take.

use std::collections::BTreeMap;

use karpenter_core::cloudprovider::InstanceType;
use karpenter_core::resources::PODS;
use karpenter_core::scheduling::{CAPACITY_TYPE_LABEL_KEY, LABEL_TOPOLOGY_ZONE};
use karpenter_core::scheduling::{Requirement, Requirements};

use super::errors::LaunchError;

/// A subnet a NodeClass resolved to, with its free addresses as last read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SubnetInfo {
    /// The subnet ID, `subnet-...`.
    pub id: String,
    /// Its zone.
    pub zone: String,
    /// Its zone ID, when known.
    pub zone_id: Option<String>,
    /// Free IPv4 addresses as EC2 last reported them.
    pub available_ips: i64,
}

/// The free addresses of subnets with launches in flight: each launch is
/// expected to take as many addresses as the smallest of its candidate
/// types has pod slots (every pod gets an address on the VPC CNI), until
/// EC2's next count replaces the estimate.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct InFlightIps {
    remaining: BTreeMap<String, i64>,
}

impl InFlightIps {
    /// No launch in flight.
    pub fn new() -> Self {
        InFlightIps::default()
    }

    /// The free addresses of `subnet`: the in-flight estimate when one is
    /// kept, else its last reported count.
    pub fn available(&self, subnet: &SubnetInfo) -> i64 {
        self.remaining
            .get(&subnet.id)
            .copied()
            .unwrap_or(subnet.available_ips)
    }

    /// Records a launch as `capacity_type` over `instance_types` into
    /// `zonal` (as [`zonal_subnets`] chose them): each subnet is expected to
    /// lose [`min_pods`] of its zone's candidates.
    pub fn reserve(
        &mut self,
        zonal: &BTreeMap<String, SubnetInfo>,
        instance_types: &[InstanceType],
        capacity_type: &str,
    ) {
        for subnet in zonal.values() {
            let used = min_pods(instance_types, capacity_type, &subnet.zone);
            let left = self.available(subnet) - used;
            self.remaining.insert(subnet.id.clone(), left);
        }
    }

    /// Gives back the addresses [`reserve`](Self::reserve) took from
    /// `subnet` for a launch that started no instance there. Upstream gives
    /// them back only while EC2's count is the one the estimate started
    /// from; the caller checks that (or [`forget`](Self::forget)s the
    /// estimate on a fresh count).
    pub fn release(
        &mut self,
        subnet: &SubnetInfo,
        instance_types: &[InstanceType],
        capacity_type: &str,
    ) {
        if let Some(left) = self.remaining.get_mut(&subnet.id) {
            *left += min_pods(instance_types, capacity_type, &subnet.zone);
        }
    }

    /// Whether an estimate is kept for the subnet `id`.
    pub fn tracks(&self, id: &str) -> bool {
        self.remaining.contains_key(id)
    }

    /// Forgets the estimate of the subnet `id`: EC2's count for it is
    /// fresher.
    pub fn forget(&mut self, id: &str) {
        self.remaining.remove(id);
    }

    /// Forgets the estimates: EC2 has given fresh counts.
    pub fn clear(&mut self) {
        self.remaining.clear();
    }
}

/// Per zone, the subnet of `subnets` with the most free addresses by
/// `in_flight`; the first listed wins a tie.
///
/// # Errors
///
/// [`LaunchError::Create`] (`SubnetResolutionFailed`) when there is no
/// subnet at all.
pub fn zonal_subnets(
    subnets: &[SubnetInfo],
    in_flight: &InFlightIps,
) -> Result<BTreeMap<String, SubnetInfo>, LaunchError> {
    if subnets.is_empty() {
        return Err(LaunchError::Create {
            reason: "SubnetResolutionFailed",
            message: "getting subnets, no subnets matched the EC2NodeClass's selector terms"
                .to_owned(),
        });
    }
    let mut zonal: BTreeMap<String, SubnetInfo> = BTreeMap::new();
    for subnet in subnets {
        match zonal.get(&subnet.zone) {
            Some(current) if in_flight.available(current) >= in_flight.available(subnet) => {}
            _ => {
                zonal.insert(subnet.zone.clone(), subnet.clone());
            }
        }
    }
    Ok(zonal)
}

/// The fewest pod slots among `instance_types` with an available
/// `capacity_type` offering in `zone` (0 when none has one): the addresses
/// a launch there surely takes.
pub fn min_pods(instance_types: &[InstanceType], capacity_type: &str, zone: &str) -> i64 {
    let requirements: Requirements = [
        Requirement::in_values(CAPACITY_TYPE_LABEL_KEY, [capacity_type]),
        Requirement::in_values(LABEL_TOPOLOGY_ZONE, [zone]),
    ]
    .into_iter()
    .collect();
    instance_types
        .iter()
        .filter(|it| it.available_offerings(&requirements).next().is_some())
        .map(|it| it.capacity.get(PODS) / 1000)
        .min()
        .unwrap_or(0)
}
