//! [`InMemoryEc2`]: EC2 in memory, as far as the provider uses it.

mod api;
mod catalog;
mod control;
mod filter;
mod fleet;
mod lookup;
mod placement;

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use jiff::Timestamp;

use super::faults::Faults;
use super::{
    CapacityReservation, CreateFleetInput, Ec2Error, Image, InMemoryQueue, Instance,
    InstanceStatus, LaunchTemplate, LaunchTemplateData, Operation, PlacementGroup, SecurityGroup,
    Subnet, TargetCapacityType,
};

/// The account every fake resource and event belongs to.
const ACCOUNT: &str = "123456789012";

/// EC2 in one region, in memory: what [`Ec2Api`](super::Ec2Api) reads and
/// writes, kept in this process, every call answered at once and the same
/// way for the same state.
///
/// It starts with three zones (`<region>a`..`c`, IDs `use1-az1` style), the
/// instance types of the embedded [`Catalog`](crate::Catalog) offered in
/// each, unlimited capacity, and no subnets, security groups, images or
/// reservations: a caller adds those. Clones share the same state, so a
/// test can keep one to exhaust capacity, reclaim spot instances or inject
/// faults while the provider works on another.
///
/// ```
/// use karpenter_aws::ec2::{DescribeInput, Ec2Api, InMemoryEc2, Subnet};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), karpenter_aws::ec2::Ec2Error> {
/// let ec2 = InMemoryEc2::new("us-east-1");
/// ec2.add_subnet(Subnet {
///     subnet_id: "subnet-a".into(),
///     availability_zone: "us-east-1a".into(),
///     available_ip_address_count: 10,
///     ..Subnet::default()
/// });
/// let subnets = ec2.describe_subnets(DescribeInput::default()).await?.subnets;
/// assert_eq!(subnets[0].availability_zone_id, "use1-az1");
/// # Ok(())
/// # }
/// ```
#[derive(Clone, Debug)]
pub struct InMemoryEc2 {
    state: Arc<Mutex<State>>,
}

/// A launch template and what it launches.
#[derive(Clone, Debug)]
struct Template {
    template: LaunchTemplate,
    data: LaunchTemplateData,
}

#[derive(Debug, Default)]
struct State {
    region: String,
    /// (name, ID), in order.
    zones: Vec<(String, String)>,
    now: Timestamp,
    subnets: BTreeMap<String, Subnet>,
    security_groups: BTreeMap<String, SecurityGroup>,
    images: BTreeMap<String, Image>,
    reservations: BTreeMap<String, CapacityReservation>,
    /// Placement groups by ID.
    placement_groups: BTreeMap<String, PlacementGroup>,
    templates: BTreeMap<String, Template>,
    instances: BTreeMap<String, Instance>,
    /// Status checks and events set by a caller; others are `ok`.
    statuses: BTreeMap<String, InstanceStatus>,
    /// Instances left per (type, zone, capacity type); absent = unlimited.
    capacity: BTreeMap<(String, String, TargetCapacityType), u32>,
    /// Spot prices set by a caller, per (type, zone).
    spot_prices: BTreeMap<(String, String), f64>,
    faults: Faults,
    /// Every `CreateFleet` input received, in order, for callers to check
    /// what was asked.
    fleet_inputs: Vec<CreateFleetInput>,
    queue: Option<InMemoryQueue>,
    /// The last number used for each kind of ID.
    counters: Counters,
}

#[derive(Debug, Default)]
struct Counters {
    instance: u64,
    fleet: u64,
    template: u64,
    event: u64,
}

impl State {
    /// The error injected for `operation`'s next call, if any.
    fn take_fault(&mut self, operation: Operation) -> Result<(), Ec2Error> {
        self.faults.take(operation)
    }

    /// The ID of zone `name` (empty when the region has no such zone).
    fn zone_id(&self, name: &str) -> String {
        self.zones
            .iter()
            .find(|(zone, _)| zone == name)
            .map(|(_, id)| id.clone())
            .unwrap_or_default()
    }
}

/// The zone ID prefix of `region` in AWS's style: `us-east-1` → `use1`.
fn zone_id_prefix(region: &str) -> String {
    let parts: Vec<&str> = region.split('-').collect();
    match parts.split_last() {
        Some((number, [first, rest @ ..])) => {
            let initials: String = rest.iter().filter_map(|p| p.chars().next()).collect();
            format!("{first}{initials}{number}")
        }
        _ => region.to_owned(),
    }
}

impl InMemoryEc2 {
    /// EC2 in `region` with zones `<region>a`, `b` and `c`, its clock at
    /// the Unix epoch.
    pub fn new(region: &str) -> Self {
        let prefix = zone_id_prefix(region);
        let zones = ["a", "b", "c"]
            .iter()
            .enumerate()
            .map(|(i, letter)| (format!("{region}{letter}"), format!("{prefix}-az{}", i + 1)))
            .collect();
        let state = State {
            region: region.to_owned(),
            zones,
            now: Timestamp::UNIX_EPOCH,
            ..State::default()
        };
        InMemoryEc2 {
            state: Arc::new(Mutex::new(state)),
        }
    }

    /// This EC2 with the zones `zones`, as (name, ID) pairs, instead.
    pub fn with_zones(self, zones: &[(&str, &str)]) -> Self {
        self.lock().zones = zones
            .iter()
            .map(|(name, id)| ((*name).to_owned(), (*id).to_owned()))
            .collect();
        self
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // A panic while holding the lock leaves plain data behind: keep going.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The region.
    pub fn region(&self) -> String {
        self.lock().region.clone()
    }

    /// The zones, as (name, ID) pairs.
    pub fn zones(&self) -> Vec<(String, String)> {
        self.lock().zones.clone()
    }
}

#[cfg(test)]
mod tests;
