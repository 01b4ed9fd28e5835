//! The subnet per zone a launch uses, with the addresses launches in
//! flight are expected to take carried from one launch to the next, as
//! upstream's subnet provider carries them.
//!
//! Upstream reads subnets at most once a minute and keeps an estimate per
//! subnet (its count less the smallest pod count of each launch's
//! candidates) until that read; a fleet that started nothing in a subnet
//! gives its share back. Here EC2 is read at every launch, so an estimate
//! is kept for upstream's minute, or until EC2's count has come down to
//! it, whichever is first: both mean the count in hand is the better one.

use std::collections::{BTreeMap, BTreeSet};

use jiff::{SignedDuration, Timestamp};
use karpenter_core::cloudprovider::{CloudProviderError, InstanceType};

use super::create::launch_error;
use super::{AwsCloudProvider, api_error, lock};
use crate::ec2::{CreateFleetInput, CreateFleetOutput, DescribeInput, Ec2Api};
use crate::launch::{InFlightIps, LaunchError, SubnetInfo, zonal_subnets};
use crate::nodeclass::EC2NodeClass;

/// How long upstream keeps the subnets it read (its default cache TTL),
/// and so the estimates made since.
const SUBNET_REFRESH: SignedDuration = SignedDuration::from_secs(60);

/// The estimates and when each began.
#[derive(Debug, Default)]
pub(super) struct SubnetEstimates {
    in_flight: InFlightIps,
    /// Per subnet with an estimate: when the first launch counted in it
    /// began.
    since: BTreeMap<String, Timestamp>,
}

impl SubnetEstimates {
    /// Drops the estimates EC2's fresh counts in `described` make stale:
    /// older than [`SUBNET_REFRESH`], or no lower than the count itself.
    fn refresh(&mut self, described: &[SubnetInfo], now: Timestamp) {
        for subnet in described {
            if !self.in_flight.tracks(&subnet.id) {
                continue;
            }
            let expired = self
                .since
                .get(&subnet.id)
                .and_then(|since| since.checked_add(SUBNET_REFRESH).ok())
                .is_none_or(|until| now >= until);
            if expired || subnet.available_ips <= self.in_flight.available(subnet) {
                self.in_flight.forget(&subnet.id);
                self.since.remove(&subnet.id);
            }
        }
    }

    /// Per zone the subnet with most free addresses by the estimates, each
    /// chosen one then expected to lose a launch's addresses.
    fn choose(
        &mut self,
        described: &[SubnetInfo],
        instance_types: &[InstanceType],
        capacity_type: &str,
        now: Timestamp,
    ) -> Result<BTreeMap<String, SubnetInfo>, LaunchError> {
        self.refresh(described, now);
        let zonal = zonal_subnets(described, &self.in_flight)?;
        self.in_flight
            .reserve(&zonal, instance_types, capacity_type);
        for subnet in zonal.values() {
            self.since.entry(subnet.id.clone()).or_insert(now);
        }
        Ok(zonal)
    }

    /// Gives back the addresses counted for the subnets of `input` that
    /// `output` (none when the call failed) started nothing in.
    fn settle(
        &mut self,
        zonal: &BTreeMap<String, SubnetInfo>,
        input: &CreateFleetInput,
        output: Option<&CreateFleetOutput>,
        instance_types: &[InstanceType],
        capacity_type: &str,
    ) {
        let launched: BTreeSet<&str> = output
            .into_iter()
            .flat_map(|o| &o.instances)
            .filter(|i| !i.instance_ids.is_empty())
            .map(|i| i.launch_template_and_overrides.subnet_id.as_str())
            .collect();
        let asked: BTreeSet<&str> = input
            .launch_template_configs
            .iter()
            .flat_map(|c| &c.overrides)
            .map(|o| o.subnet_id.as_str())
            .collect();
        // No describe came between the estimate and now, so EC2's count is
        // still the one it started from, upstream's condition to give back.
        for subnet in zonal.values() {
            if asked.contains(subnet.id.as_str()) && !launched.contains(subnet.id.as_str()) {
                self.in_flight
                    .release(subnet, instance_types, capacity_type);
            }
        }
    }
}

impl<E: Ec2Api> AwsCloudProvider<E> {
    /// The subnet per zone a launch as `capacity_type` over
    /// `instance_types` uses: the class's resolved subnets as EC2 counts
    /// their free addresses now, less those out of addresses and the
    /// addresses launches in flight are expected to take.
    pub(super) async fn zonal_subnets(
        &self,
        class: &EC2NodeClass,
        instance_types: &[InstanceType],
        capacity_type: &str,
    ) -> Result<BTreeMap<String, SubnetInfo>, CloudProviderError> {
        let ids: Vec<String> = class
            .status
            .as_ref()
            .and_then(|s| s.subnets.as_deref())
            .unwrap_or_default()
            .iter()
            .map(|s| s.id.clone())
            .collect();
        let described = self
            .api
            .describe_subnets(DescribeInput {
                ids,
                filters: Vec::new(),
            })
            .await
            .map_err(|e| api_error("describing the EC2NodeClass's subnets", e))?;
        let now = (self.clock)();
        let unavailable = lock(&self.unavailable);
        let infos: Vec<SubnetInfo> = described
            .subnets
            .into_iter()
            .filter(|s| !unavailable.subnet_unavailable(&s.subnet_id, now))
            .map(|s| SubnetInfo {
                id: s.subnet_id,
                zone: s.availability_zone,
                zone_id: Some(s.availability_zone_id).filter(|z| !z.is_empty()),
                available_ips: i64::from(s.available_ip_address_count),
            })
            .collect();
        drop(unavailable);
        lock(&self.subnet_estimates)
            .choose(&infos, instance_types, capacity_type, now)
            .map_err(|e| launch_error(e, Vec::new()))
    }

    /// After `CreateFleet`: the addresses counted for subnets it started
    /// nothing in are given back.
    pub(super) fn settle_subnets(
        &self,
        zonal: &BTreeMap<String, SubnetInfo>,
        input: &CreateFleetInput,
        output: Option<&CreateFleetOutput>,
        instance_types: &[InstanceType],
        capacity_type: &str,
    ) {
        lock(&self.subnet_estimates).settle(zonal, input, output, instance_types, capacity_type);
    }
}
