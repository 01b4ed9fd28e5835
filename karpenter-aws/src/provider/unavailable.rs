//! What EC2 lately refused, each until its time runs out: offerings (the
//! engine's [`UnavailableOfferings`]), subnets out of addresses (a zone is
//! unavailable once every subnet of the class there is), all spot (the
//! account may not create the spot service role) and exhausted capacity
//! reservations.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use jiff::{SignedDuration, Timestamp};
use karpenter_core::cloudprovider::{InstanceType, OfferingKey, UnavailableOfferings};
use karpenter_core::scheduling::CAPACITY_TYPE_SPOT;

use crate::launch::UnavailableMark;
use crate::nodeclass::EC2NodeClass;

/// The marks, each with the moment it runs out.
#[derive(Debug, Default)]
pub(crate) struct Unavailable {
    offerings: UnavailableOfferings,
    subnets: BTreeMap<String, Timestamp>,
    reservations: BTreeMap<String, Timestamp>,
    all_spot: Option<Timestamp>,
}

/// `now` plus `ttl`, saturating.
fn until(now: Timestamp, ttl: Duration) -> Timestamp {
    let ttl = SignedDuration::try_from(ttl).unwrap_or(SignedDuration::MAX);
    now.saturating_add(ttl).unwrap_or(Timestamp::MAX)
}

/// Keeps the later of an existing expiry and `at`.
fn extend(entry: &mut Timestamp, at: Timestamp) {
    *entry = (*entry).max(at);
}

impl Unavailable {
    /// Marks one offering.
    pub(crate) fn mark_offering(&mut self, key: OfferingKey, now: Timestamp, ttl: Duration) {
        self.offerings.mark(key, now, ttl);
    }

    /// Marks a reservation exhausted.
    pub(crate) fn mark_reservation(&mut self, id: &str, now: Timestamp, ttl: Duration) {
        let at = until(now, ttl);
        extend(self.reservations.entry(id.to_owned()).or_insert(at), at);
    }

    /// Records what a launch's errors mark.
    pub(crate) fn mark(&mut self, marks: &[UnavailableMark], now: Timestamp, ttl: Duration) {
        let at = until(now, ttl);
        for mark in marks {
            match mark {
                UnavailableMark::Offering { .. } => {
                    if let Some(key) = mark.offering_key() {
                        self.offerings.mark(key, now, ttl);
                    }
                }
                UnavailableMark::Subnet(id) => {
                    extend(self.subnets.entry(id.clone()).or_insert(at), at);
                }
                UnavailableMark::Reservation(id) => self.mark_reservation(id, now, ttl),
                UnavailableMark::AllSpot => {
                    self.all_spot = Some(self.all_spot.map_or(at, |t| t.max(at)));
                }
            }
        }
    }

    /// Forgets what has run out at `now`.
    pub(crate) fn expire(&mut self, now: Timestamp) {
        self.offerings.expire(now);
        self.subnets.retain(|_, t| now < *t);
        self.reservations.retain(|_, t| now < *t);
        self.all_spot = self.all_spot.filter(|t| now < *t);
    }

    /// Whether nothing is marked.
    pub(crate) fn is_empty(&self) -> bool {
        self.offerings.is_empty()
            && self.subnets.is_empty()
            && self.reservations.is_empty()
            && self.all_spot.is_none()
    }

    /// Whether subnet `id` is out of addresses at `now`.
    pub(crate) fn subnet_unavailable(&self, id: &str, now: Timestamp) -> bool {
        self.subnets.get(id).is_some_and(|t| now < *t)
    }

    /// The zones of `class` whose every subnet is out of addresses.
    fn exhausted_zones(&self, class: &EC2NodeClass, now: Timestamp) -> BTreeSet<String> {
        let subnets = class
            .status
            .as_ref()
            .and_then(|s| s.subnets.as_deref())
            .unwrap_or_default();
        let mut usable: BTreeMap<&str, bool> = BTreeMap::new();
        for subnet in subnets {
            let ok = !self.subnet_unavailable(&subnet.id, now);
            *usable.entry(subnet.zone.as_str()).or_insert(false) |= ok;
        }
        usable
            .into_iter()
            .filter(|(_, ok)| !ok)
            .map(|(zone, _)| zone.to_owned())
            .collect()
    }

    /// Marks the offerings of `types` that are unavailable at `now`.
    pub(crate) fn apply(&self, class: &EC2NodeClass, types: &mut [InstanceType], now: Timestamp) {
        self.offerings.apply(types, now);
        let zones = self.exhausted_zones(class, now);
        let all_spot = self.all_spot.is_some_and(|t| now < t);
        if zones.is_empty() && !all_spot && self.reservations.is_empty() {
            return;
        }
        for instance_type in types {
            instance_type.mark_unavailable(|offering| {
                zones.contains(&offering.zone)
                    || (all_spot && offering.capacity_type == CAPACITY_TYPE_SPOT)
                    || offering
                        .reservation_id()
                        .and_then(|id| self.reservations.get(id))
                        .is_some_and(|t| now < *t)
            });
        }
    }
}
