//! The failure cache, as upstream's (`pkg/cache/unavailableofferings.go` and
//! the create-error handlers): each Azure error from a launch marks a scope
//! unavailable for a time: one offering, a zone, every zone of the same
//! placement scope, a VM family at or above a vCPU count, or all spot.
//! Planning then sees those offerings as unavailable.
//!
//! Upstream keeps one expiry per key and sets it anew on every failure, so a
//! short failure after a long one cuts the long one short (and a family
//! entry keeps its lowest vCPU count under the newest expiry). Here each
//! failure's block stands for its own time: a repeat extends it, an earlier
//! longer block is kept, and a family's blocks at different vCPU counts keep
//! their own times.

use std::collections::BTreeMap;
use std::time::Duration;

use jiff::{SignedDuration, Timestamp};
use karpenter_core::cloudprovider::{InstanceType, Offering};
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

/// Offerings, VM families and all of spot, each unavailable until a moment:
/// the failure cache, as upstream's (`pkg/cache/unavailableofferings.go` and
/// the create-error handlers). Each Azure error from a launch marks a scope
/// unavailable for a time: one offering, a zone, every zone of the same
/// placement scope, a VM family at or above a vCPU count, or all spot.
/// Planning then sees those offerings as unavailable.
///
/// A failure marks its scope from now for its time; a later failure on the
/// same scope sets the time again (a repeat extends it), but never cuts an
/// earlier, longer mark short, and time that has run out is forgotten.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FailureCache {
    /// (capacity type, size, zone).
    offerings: BTreeMap<(String, String, String), Timestamp>,
    /// (family lowercase, zone, capacity type) -> the sizes blocked.
    families: BTreeMap<(String, String, String), FamilyBlocks>,
    /// Every spot offering.
    all_spot: Option<Timestamp>,
}

/// A VM family's blocks in one zone and capacity type: each blocks the
/// sizes of at least some vCPUs until a moment. None covers another (a lower
/// vCPU count blocked as long or longer), so the list stays short.
#[derive(Clone, Debug, Default, PartialEq)]
struct FamilyBlocks(Vec<(u32, Timestamp)>);

impl FamilyBlocks {
    /// Blocks sizes of `from` vCPUs up until `until`.
    fn add(&mut self, from: u32, until: Timestamp) {
        if self.0.iter().any(|&(v, t)| v <= from && t >= until) {
            return;
        }
        self.0.retain(|&(v, t)| !(v >= from && t <= until));
        self.0.push((from, until));
    }

    /// Whether a size of `vcpus` is blocked at `now`.
    fn blocks(&self, vcpus: u32, now: Timestamp) -> bool {
        self.0.iter().any(|&(from, t)| vcpus >= from && now < t)
    }

    /// Forgets the blocks that ran out at `now`.
    fn expire(&mut self, now: Timestamp) {
        self.0.retain(|&(_, t)| now < t);
    }
}

fn until(now: Timestamp, ttl: Duration) -> Timestamp {
    let ttl = SignedDuration::try_from(ttl).unwrap_or(SignedDuration::MAX);
    now.saturating_add(ttl).unwrap_or(Timestamp::MAX)
}

/// Whether the zone label is regional placement.
fn is_regional(zone: &str) -> bool {
    zone == "0"
}

/// The zones of `offerings`, each once, in their order.
fn zones_of<'o>(offerings: impl Iterator<Item = &'o Offering>) -> Vec<&'o str> {
    let mut zones: Vec<&str> = Vec::new();
    for offering in offerings {
        if !zones.contains(&offering.zone.as_str()) {
            zones.push(&offering.zone);
        }
    }
    zones
}

impl FailureCache {
    /// An empty cache.
    pub fn new() -> Self {
        Self::default()
    }

    /// Forgets every mark that ran out at `now`.
    pub fn expire(&mut self, now: Timestamp) {
        self.offerings.retain(|_, t| now < *t);
        self.families.values_mut().for_each(|b| b.expire(now));
        self.families.retain(|_, b| !b.0.is_empty());
        self.all_spot = self.all_spot.filter(|t| now < *t);
    }

    /// Marks one offering, and its family from its vCPU count up in that
    /// zone and capacity type (as upstream's `MarkUnavailableWithTTL`), from
    /// `now` for `ttl`.
    pub fn mark(
        &mut self,
        attempt: &Attempt,
        zone: &str,
        capacity_type: &str,
        now: Timestamp,
        ttl: Duration,
    ) {
        self.expire(now);
        let expiry = until(now, ttl);
        let key = (
            capacity_type.to_owned(),
            attempt.sku.clone(),
            zone.to_owned(),
        );
        let slot = self.offerings.entry(key).or_insert(expiry);
        *slot = (*slot).max(expiry);
        let family = (
            attempt.family.to_lowercase(),
            zone.to_owned(),
            capacity_type.to_owned(),
        );
        self.families
            .entry(family)
            .or_default()
            .add(attempt.vcpus, expiry);
    }

    /// Marks every spot offering.
    pub fn mark_all_spot(&mut self, now: Timestamp, ttl: Duration) {
        self.expire(now);
        let expiry = until(now, ttl);
        self.all_spot = Some(self.all_spot.map_or(expiry, |t| t.max(expiry)));
    }

    /// Records what `error` says about `attempt`, with `offerings` the
    /// offerings of the size's instance type (available or not): a scope
    /// wider than the attempt's zone covers the zones the size is offered
    /// in, as upstream's handlers walk the instance type's offerings, so a
    /// family is never blocked where the failed size is not offered. Returns
    /// the reason, or `None` for an error that marks nothing.
    pub fn record(
        &mut self,
        error: &AzureError,
        attempt: &Attempt,
        offerings: &[Offering],
        now: Timestamp,
    ) -> Option<FailureReason> {
        let ct = attempt.capacity_type.as_str();
        let same_scope = |o: &&Offering| is_regional(&o.zone) == is_regional(&attempt.zone);
        let of_type = |o: &&Offering| o.capacity_type == ct;
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
            for zone in zones_of(offerings.iter().filter(of_type)) {
                self.mark(attempt, zone, ct, now, ttl);
            }
            return Some(FailureReason::SubscriptionQuotaReached);
        }
        let unsupported = code == "VMSizeNotSupported"
            || (code == "BadRequest" && message.contains("is not supported for subscription"));
        if unsupported {
            for zone in zones_of(offerings.iter()) {
                for capacity_type in both {
                    self.mark(attempt, zone, capacity_type, now, 23 * HOUR);
                }
            }
            return Some(FailureReason::SkuNotAvailable);
        }
        match code {
            "SkuNotAvailable" => {
                let ttl = if ct == CAPACITY_TYPE_SPOT {
                    HOUR
                } else {
                    23 * HOUR
                };
                for zone in zones_of(offerings.iter().filter(of_type).filter(same_scope)) {
                    self.mark(attempt, zone, ct, now, ttl);
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
                for zone in zones_of(offerings.iter().filter(same_scope)) {
                    for capacity_type in both {
                        self.mark(attempt, zone, capacity_type, now, HOUR);
                    }
                }
                Some(FailureReason::AllocationFailure)
            }
            "OverconstrainedZonalAllocationRequest" => {
                self.mark(attempt, &attempt.zone, ct, now, HOUR);
                Some(FailureReason::OverconstrainedZonalAllocationFailure)
            }
            "OverconstrainedAllocationRequest" => {
                for zone in zones_of(offerings.iter().filter(of_type).filter(same_scope)) {
                    self.mark(attempt, zone, ct, now, HOUR);
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
            .is_some_and(|blocks| blocks.blocks(vcpus, now))
    }

    /// Whether nothing is recorded (an entry that ran out counts until it
    /// is forgotten).
    pub fn is_empty(&self) -> bool {
        self.offerings.is_empty() && self.families.is_empty() && self.all_spot.is_none()
    }

    /// Marks the offerings of `types` that are unavailable at `now`.
    pub fn apply(&self, catalog: &Catalog, types: &mut [InstanceType], now: Timestamp) {
        if self.is_empty() {
            // Nothing recorded: nothing to mark (the common case, at every read).
            return;
        }
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
