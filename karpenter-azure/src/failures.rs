//! The failure cache, as upstream's (`pkg/cache/unavailableofferings.go` and
//! the create-error handlers): each Azure error from a launch marks a scope
//! unavailable for a time: one offering, a zone, every zone of the same
//! placement scope, a VM family at or above a vCPU count, or all spot.
//! Planning then sees those offerings as unavailable.

use std::collections::BTreeMap;
use std::time::Duration;

use jiff::{SignedDuration, Timestamp};
use karpenter_core::cloudprovider::InstanceType;
use karpenter_core::scheduling::{CAPACITY_TYPE_ON_DEMAND, CAPACITY_TYPE_SPOT};

use crate::catalog::Catalog;

const MINUTE: Duration = Duration::from_secs(60);
const HOUR: Duration = Duration::from_secs(3600);

/// An error Azure returned, by its code and message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AzureError {
    /// The ARM error code (`SkuNotAvailable`, `ZonalAllocationFailed`, ...).
    pub code: String,
    /// The message.
    pub message: String,
}

/// What an error marked, as upstream's reason names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FailureReason {
    /// A quota (low-priority cores, family cores) is used up.
    SubscriptionQuotaReached,
    /// The size cannot be had here.
    SkuNotAvailable,
    /// No capacity in the zone.
    ZonalAllocationFailure,
    /// No capacity in the region.
    AllocationFailure,
    /// The zonal request's constraints cannot be met.
    OverconstrainedZonalAllocationFailure,
    /// The request's constraints cannot be met.
    OverconstrainedAllocationFailure,
}

/// The launch that failed: the size (with its family and vCPUs), the zone
/// label (`eastus-1`, or `0` for regional) and the capacity type.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Attempt {
    /// The size.
    pub sku: String,
    /// Its quota family.
    pub family: String,
    /// Its vCPUs.
    pub vcpus: u32,
    /// The zone label.
    pub zone: String,
    /// `on-demand` or `spot`.
    pub capacity_type: String,
}

/// Offerings, VM families and all of spot, each unavailable until a moment.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FailureCache {
    /// (capacity type, size, zone).
    offerings: BTreeMap<(String, String, String), Timestamp>,
    /// (family lowercase, zone, capacity type) -> (lowest blocked vCPUs, until).
    families: BTreeMap<(String, String, String), (u32, Timestamp)>,
    /// Every spot offering.
    all_spot: Option<Timestamp>,
}

fn until(now: Timestamp, ttl: Duration) -> Timestamp {
    let ttl = SignedDuration::try_from(ttl).unwrap_or(SignedDuration::MAX);
    now.saturating_add(ttl).unwrap_or(Timestamp::MAX)
}

fn later(slot: &mut Timestamp, candidate: Timestamp) {
    *slot = (*slot).max(candidate);
}

/// Whether the zone label is regional placement.
fn is_regional(zone: &str) -> bool {
    zone == "0"
}

impl FailureCache {
    /// An empty cache.
    pub fn new() -> Self {
        Self::default()
    }

    /// Marks one offering, and its family from its vCPU count up in that
    /// zone and capacity type (as upstream's `MarkUnavailableWithTTL`).
    pub fn mark(
        &mut self,
        attempt: &Attempt,
        zone: &str,
        capacity_type: &str,
        now: Timestamp,
        ttl: Duration,
    ) {
        let expiry = until(now, ttl);
        let key = (
            capacity_type.to_owned(),
            attempt.sku.clone(),
            zone.to_owned(),
        );
        later(self.offerings.entry(key).or_insert(expiry), expiry);
        let family = (
            attempt.family.to_lowercase(),
            zone.to_owned(),
            capacity_type.to_owned(),
        );
        let entry = self
            .families
            .entry(family)
            .or_insert((attempt.vcpus, expiry));
        entry.0 = entry.0.min(attempt.vcpus);
        later(&mut entry.1, expiry);
    }

    /// Marks every spot offering.
    pub fn mark_all_spot(&mut self, now: Timestamp, ttl: Duration) {
        let expiry = until(now, ttl);
        self.all_spot = Some(self.all_spot.map_or(expiry, |t| t.max(expiry)));
    }

    /// Records what `error` says about `attempt`, with `zones` the region's
    /// zone labels (`0` included); returns the reason, or `None` for an error
    /// that marks nothing.
    pub fn record(
        &mut self,
        error: &AzureError,
        attempt: &Attempt,
        zones: &[String],
        now: Timestamp,
    ) -> Option<FailureReason> {
        let same_scope: Vec<&String> = zones
            .iter()
            .filter(|z| is_regional(z) == is_regional(&attempt.zone))
            .collect();
        let both = [CAPACITY_TYPE_ON_DEMAND, CAPACITY_TYPE_SPOT];
        let message = error.message.as_str();
        let code = error.code.as_str();
        if code == "OperationNotAllowed" && message.contains("LowPriorityCores") {
            self.mark_all_spot(now, HOUR);
            return Some(FailureReason::SubscriptionQuotaReached);
        }
        if code == "OperationNotAllowed" && message.contains("Family Cores quota") {
            let ttl = if message.contains("Current Limit: 0") {
                HOUR
            } else {
                10 * MINUTE
            };
            for zone in zones {
                self.mark(attempt, zone, &attempt.capacity_type, now, ttl);
            }
            return Some(FailureReason::SubscriptionQuotaReached);
        }
        let unsupported = code == "VMSizeNotSupported"
            || (code == "BadRequest" && message.contains("is not supported for subscription"));
        if unsupported {
            for zone in zones {
                for capacity_type in both {
                    self.mark(attempt, zone, capacity_type, now, 23 * HOUR);
                }
            }
            return Some(FailureReason::SkuNotAvailable);
        }
        match code {
            "SkuNotAvailable" => {
                let ttl = if attempt.capacity_type == CAPACITY_TYPE_SPOT {
                    HOUR
                } else {
                    23 * HOUR
                };
                for zone in &same_scope {
                    self.mark(attempt, zone, &attempt.capacity_type, now, ttl);
                }
                Some(FailureReason::SkuNotAvailable)
            }
            "ZonalAllocationFailed" => {
                for capacity_type in both {
                    self.mark(attempt, &attempt.zone, capacity_type, now, HOUR);
                }
                Some(FailureReason::ZonalAllocationFailure)
            }
            "AllocationFailed" => {
                for zone in &same_scope {
                    for capacity_type in both {
                        self.mark(attempt, zone, capacity_type, now, HOUR);
                    }
                }
                Some(FailureReason::AllocationFailure)
            }
            "OverconstrainedZonalAllocationRequest" => {
                self.mark(attempt, &attempt.zone, &attempt.capacity_type, now, HOUR);
                Some(FailureReason::OverconstrainedZonalAllocationFailure)
            }
            "OverconstrainedAllocationRequest" => {
                for zone in &same_scope {
                    self.mark(attempt, zone, &attempt.capacity_type, now, HOUR);
                }
                Some(FailureReason::OverconstrainedAllocationFailure)
            }
            _ => None,
        }
    }

    /// Whether the offering of `sku` (quota `family`, `vcpus`) in `zone` and
    /// `capacity_type` is unavailable at `now`.
    pub fn is_unavailable(
        &self,
        sku: &str,
        family: &str,
        vcpus: u32,
        zone: &str,
        capacity_type: &str,
        now: Timestamp,
    ) -> bool {
        if capacity_type == CAPACITY_TYPE_SPOT && self.all_spot.is_some_and(|t| now < t) {
            return true;
        }
        let key = (capacity_type.to_owned(), sku.to_owned(), zone.to_owned());
        if self.offerings.get(&key).is_some_and(|t| now < *t) {
            return true;
        }
        let family = (
            family.to_lowercase(),
            zone.to_owned(),
            capacity_type.to_owned(),
        );
        self.families
            .get(&family)
            .is_some_and(|(from, t)| now < *t && vcpus >= *from)
    }

    /// Marks the offerings of `types` that are unavailable at `now`.
    pub fn apply(&self, catalog: &Catalog, types: &mut [InstanceType], now: Timestamp) {
        for instance_type in types {
            let Some(sku) = catalog.sku(&instance_type.name) else {
                continue;
            };
            // The type's zones and capacity types follow (upstream builds them
            // from the available offerings).
            instance_type.mark_unavailable(|offering| {
                self.is_unavailable(
                    &sku.name,
                    &sku.family,
                    sku.vcpus,
                    &offering.zone,
                    &offering.capacity_type,
                    now,
                )
            });
        }
    }
}
